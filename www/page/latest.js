// The latest of one kind of request (a run, a tokenization, a model load, a view's update): starting
// a new one aborts the one before, so an answer that arrives after it was superseded is dropped
// rather than shown. Every staleness check of the page is this one:
//
//   const updates = latest();
//   async function update() {
//     const signal = updates.start();   // the update before this one is now stale
//     const data = await app.tensors(names);
//     if (signal.aborted) return;       // a newer update started, or the view was taken down
//     draw(data);
//   }
//   destroy() { updates.abort(); }
//
// Work that belongs to the latest request without superseding it (a button of the drawn view) takes
// current() instead of start(). Built on AbortController, so a signal can also be handed to whatever
// accepts one.

export function latest() {
  let controller = null;
  return {
    /** Aborts the previous request of this kind and returns the new one's signal. */
    start() {
      controller?.abort();
      controller = new AbortController();
      return controller.signal;
    },
    /** Aborts the current request, if any, without starting another (a view taken down). */
    abort() {
      controller?.abort();
      controller = null;
    },
    /**
     * The signal of the latest request, for work that joins it: aborted, like it, by the next
     * start() or abort(). With none under way (none yet, or the last one aborted), a new one.
     */
    current() {
      controller ??= new AbortController();
      return controller.signal;
    },
  };
}
