/** A promise settled from outside the code under test: an answer still in flight. */
export function deferred(): { promise: Promise<void>; pass(): void; refuse(error: unknown): void } {
  let pass!: () => void;
  let refuse!: (error: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    pass = resolve;
    refuse = reject;
  });
  return { promise, pass, refuse };
}

/** One turn of the event loop: every promise already settled has had its callbacks run. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
