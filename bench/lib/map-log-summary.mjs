// Hidden classes ("maps") the gateway's JavaScript engine created per request, from a V8 log
// written with `--log-maps`: every `map,<kind>,…` line is one class made (a transition that adds a
// key, a switch to dictionary mode, …). V8 makes a transition once and reuses it, so under steady
// traffic the count per request should be near zero; a key that shows up about once a request
// names an object built so that the engine makes a fresh class for it on every call (an object
// literal that spreads another object and then adds a key the other lacks, on Node 20), each one
// some microseconds and a class left for the full collector.

/** A `map,Transition,<time>,<from>,<to>,<pc>,<line>,<column>,<reason>,<key>` line's key; it may hold commas. */
const TRANSITION_KEY_FIELD = 9;

export function summarizeMapLog(text, requests, top = 20) {
  const byKind = new Map();
  const byKey = new Map();
  let total = 0;
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const line of text.split('\n')) {
    if (!line.startsWith('map,')) continue;
    const fields = line.split(',');
    total += 1;
    add(byKind, fields[1]);
    if (fields[1] === 'Transition' && fields.length > TRANSITION_KEY_FIELD) add(byKey, fields.slice(TRANSITION_KEY_FIELD).join(','));
  }
  const perRequest = (count) => Math.round((count / requests) * 100) / 100;
  const ranked = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => ({ name, perRequest: perRequest(count) }));
  return { requests, classesPerRequest: perRequest(total), byKind: ranked(byKind), transitionsByKey: ranked(byKey) };
}
