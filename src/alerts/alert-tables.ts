/**
 * Tables of the alerts feature (portable: text ids, bigint epoch-ms times, 0/1 booleans, JSON as text).
 * Listed in db/feature-tables.ts.
 */

export interface AlertChannelsTable {
  id: string;
  org_id: string;
  name: string;
  channel_type: string;
  /** JSON of the non-secret config fields. */
  config: string;
  /** SecretBox envelope of the JSON of the secret fields (channel-types SECRET_FIELDS), or null when there are none. */
  secrets_ciphertext: string | null;
  /** JSON array of subscribed event kinds. */
  events: string;
  is_active: number;
  created_at: number;
  updated_at: number;
}

export interface AlertDeliveriesTable {
  id: string;
  channel_id: string;
  org_id: string;
  event_kind: string;
  severity: string;
  /** 1 when the receiver accepted the notification (a 2xx in time). */
  delivered: number;
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  test: number;
  created_at: number;
}

export interface AlertRoutesTable {
  org_id: string;
  event_kind: string;
  /** Threshold as a fraction ("0.5", "0.8", "1"), or '' for a route that applies to every threshold/event. */
  threshold_key: string;
  /** JSON array of channel ids. */
  channel_ids: string;
  updated_at: number;
}

export interface AlertTables {
  alert_channels: AlertChannelsTable;
  alert_deliveries: AlertDeliveriesTable;
  alert_routes: AlertRoutesTable;
}
