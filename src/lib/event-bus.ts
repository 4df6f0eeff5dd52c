/**
 * Operational events (SPEC "Events"). Producers publish without waiting; alerting subscribes and
 * delivers to channels. Delivery never blocks or slows the call that produced the event.
 */
export const EVENT_KINDS = [
  'llm.error',
  'budget.threshold',
  'provider.outage',
  'guardrail.triggered',
  'key.created',
  'key.revoked',
] as const;
export type GatewayEventKind = (typeof EVENT_KINDS)[number];

export type Severity = 'CRITICAL' | 'HIGH' | 'WARNING' | 'INFO';

export interface GatewayEvent {
  kind: GatewayEventKind;
  /** The org the event concerns; null for gateway-wide events (a provider outage). */
  orgId: string | null;
  severity: Severity;
  /** Short summary without the "[gw]" prefix; the notifier adds it. */
  title: string;
  message: string;
  /** Spec keys where they apply: org_id, current_balance, threshold, request_id, key_alias, guardrail_name, model. */
  details: Record<string, unknown>;
  occurredAt: number;
  /** For budget.threshold: the channels chosen for this threshold (destinations per threshold); absent = org's subscribers. */
  channelIds?: string[];
}

export type EventListener = (event: GatewayEvent) => void;

export interface EventBus {
  publish(event: GatewayEvent): void;
  subscribe(listener: EventListener): () => void;
}

export function createEventBus(onListenerError: (error: unknown) => void = () => {}): EventBus {
  const listeners = new Set<EventListener>();
  return {
    publish(event) {
      for (const listener of listeners) {
        // Listeners run after the current call stack so a slow or throwing listener never touches the request.
        queueMicrotask(() => {
          try {
            listener(event);
          } catch (error) {
            onListenerError(error);
          }
        });
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
