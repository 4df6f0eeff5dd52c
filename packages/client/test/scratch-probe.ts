import { startGateway } from '../../../test/helpers/start-gateway.js';
import { Gw } from '../src/index.js';
const running = await startGateway();
const gw = new Gw({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
try {
  const { data, meta } = await gw.channels.create({ name: 'ops mail', channel_type: 'email', config: { to: ['ops@example.com'] } }).withMeta();
  console.log(data, meta.requestId);
  const r = await gw.channels.test(data.id).withMeta();
  console.log(r.data);
} catch (e: any) { console.log('ERR', e.constructor.name, e.status, e.message); }
await running.close();
