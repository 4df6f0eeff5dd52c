// Bytes allocated per request from a V8 sampling heap profile (HeapProfiler.stopSampling's
// `profile`): by the allocating function, and by the nearest gateway frame above it (dist/…), so a
// library's allocation is charged to the gateway code that asked for it.

function frameName(callFrame) {
  const url = callFrame.url.replace(/^file:\/\//, '');
  const modules = url.lastIndexOf('node_modules/');
  const dist = url.lastIndexOf('/dist/');
  const short = modules >= 0 ? url.slice(modules + 'node_modules/'.length) : dist >= 0 ? url.slice(dist + 1) : url;
  return `${callFrame.functionName || '(anonymous)'} ${short}:${callFrame.lineNumber + 1}`;
}

export function summarizeAllocations(profile, requests, top = 20) {
  const bySite = new Map();
  const byGatewayFrame = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node, gatewayFrame) => {
    const name = frameName(node.callFrame);
    const nearest = name.includes(' dist/') ? name : gatewayFrame;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(bySite, name, node.selfSize);
      add(byGatewayFrame, nearest ?? name, node.selfSize);
    }
    for (const child of node.children ?? []) walk(child, nearest);
  };
  walk(profile.head, undefined);
  const perRequest = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([site, bytes]) => ({ site, bytesPerRequest: Math.round(bytes / requests) }));
  return { requests, bytesPerRequest: Math.round(total / requests), bySite: perRequest(bySite), byGatewayFrame: perRequest(byGatewayFrame) };
}
