// Offline use: registers the service worker (sw.js) and hands it the list of everything this page
// and its Web Worker loaded, so the first visit is enough to work offline afterwards. The list is
// read from the browsers' own resource timing, so it never goes stale as modules are added; the
// string tables of the languages the page did not show (strings.js LANGUAGE_FILES, the Chinese one
// on an English visit) are added to it, so the language switch works offline too.
// Service workers exist only over https (and http on localhost): elsewhere this does nothing.

import { LANGUAGE_FILES } from './strings.js';

export async function keepOffline(workerResources) {
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol)) return null;
  const registration = await navigator.serviceWorker.register(new URL('./sw.js', import.meta.url));
  const worker = registration.active ?? (await navigator.serviceWorker.ready).active;
  const urls = [location.href, ...performance.getEntriesByType('resource').map((e) => e.name), ...LANGUAGE_FILES, ...(await workerResources())];
  const channel = new MessageChannel();
  const done = new Promise((resolve) => {
    channel.port1.onmessage = ({ data }) => resolve(data);
  });
  worker.postMessage({ attnscope: 'cache', urls }, [channel.port2]);
  return done;
}
