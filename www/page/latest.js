// The latest of one kind of request (a run, a tokenization, a model load): starting a new one aborts
// the one before, so an answer that arrives after it was superseded is dropped rather than shown.
// Built on AbortController, so a signal can also be handed to whatever accepts one.

export function latest() {
  let controller = null;
  return {
    /** Aborts the previous request of this kind and returns the new one's signal. */
    start() {
      controller?.abort();
      controller = new AbortController();
      return controller.signal;
    },
    /** Aborts the current request, if any, without starting another. */
    abort() {
      controller?.abort();
    },
  };
}
