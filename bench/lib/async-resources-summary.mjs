// What bench/async-resources.mjs prints: the probe's counts (bench/lib/async-resources-probe.mjs)
// per call, most first, and the creating sites per call, with paths shown from the repository root.

/** counts: { [type]: number } over `calls` calls -> [{ type, perCall }] most first, none under 0.01 a call. */
export function perCallCounts(counts, calls) {
  return Object.entries(counts)
    .map(([type, count]) => ({ type, perCall: round2(count / calls) }))
    .filter((row) => row.perCall >= 0.01)
    .sort((a, b) => b.perCall - a.perCall || a.type.localeCompare(b.type));
}

/** sites: { 'TYPE /abs/path': number } -> [{ type, site, perCall }] most first, paths relative to `root`, at most `limit`. */
export function perCallSites(sites, calls, root, limit = 25) {
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return Object.entries(sites)
    .map(([key, count]) => {
      const space = key.indexOf(' ');
      const site = key.slice(space + 1);
      return { type: key.slice(0, space), site: site.startsWith(prefix) ? site.slice(prefix.length) : site, perCall: round2(count / calls) };
    })
    .filter((row) => row.perCall >= 0.01)
    .sort((a, b) => b.perCall - a.perCall || a.site.localeCompare(b.site))
    .slice(0, limit);
}

const round2 = (value) => Math.round(value * 100) / 100;
