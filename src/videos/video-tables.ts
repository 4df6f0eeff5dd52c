export interface VideosTable {
  id: string;
  org_id: string;
  key_id: string;
  model: string;
  deployment_id: string;
  provider: string;
  upstream_job_id: string;
  status: string;
  progress: number;
  prompt: string;
  seconds: number;
  size: string;
  error: string | null;
  created_at: number;
  completed_at: number | null;
  updated_at: number;
  /** The request that created the job: its charge is the spend-ledger entry of this request id. Null on jobs made before refunds. */
  request_id: string | null;
  /** JSON: the credit and budget accounts that request was charged to (metering/spend-gate.ts SpendAccount[]). */
  spend_accounts: string | null;
  /** When a failed job's charge was given back (or found to be nothing); null while it is owed. */
  refunded_at: number | null;
  /** What was given back, in nano-USD. */
  refund_nanos: number | null;
}

export interface VideoTables {
  videos: VideosTable;
}
