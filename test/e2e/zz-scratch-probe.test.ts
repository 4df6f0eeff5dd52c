import { test } from 'node:test';
import { adminRequest, startGateway } from '../helpers/zz-scratch-start.js';
test('probe', async () => {
  const running = await startGateway();
  for (const limit of ['0.000000001', '1']) {
    const key = await adminRequest(running, 'POST', '/api/admin/keys', { org_id: running.orgId, name: 'k' + limit, budget: { limit_usd: limit, period: 'monthly', thresholds: [0.5, 0.8, 1] } });
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${running.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key.body.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'local-chat', max_tokens: 1, messages: [{ role: 'user', content: 'spend something' }] }) });
      console.log(limit, r.status, JSON.stringify(Object.fromEntries([...r.headers].filter(([k]) => k.startsWith('x-gw')))), (await r.text()).slice(0, 400));
    }
  }
  await running.close();
});
