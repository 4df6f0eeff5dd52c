import { subscribe, unsubscribe } from 'node:diagnostics_channel';

export type ChannelListener = readonly [channel: string, listener: (message: unknown) => void];

/** Runs `call` with each listener subscribed to its diagnostics channel, and unsubscribes them after, whatever happens. */
export async function whileSubscribed(listeners: readonly ChannelListener[], call: () => Promise<void>): Promise<void> {
  for (const [channel, listener] of listeners) subscribe(channel, listener);
  try {
    await call();
  } finally {
    for (const [channel, listener] of listeners) unsubscribe(channel, listener);
  }
}
