import { startGateway } from '../../../test/helpers/start-gateway.js';
import { Gw } from '../src/index.js';
const running = await startGateway();
const gw = new Gw({ apiKey: running.apiKey, baseURL: running.baseURL, maxRetries: 0 });
const show = async (name: string, p: any) => {
  try { const { data, meta } = await gw.withMeta(p); console.log(name, JSON.stringify(data).slice(0, 300), JSON.stringify(meta)); }
  catch (e: any) { console.log(name, 'ERR', e.constructor.name, e.status, e.code, e.message); }
};
await show('chat', gw.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }] }));
const s = await gw.chat.completions.create({ model: 'local-chat', messages: [{ role: 'user', content: 'ping' }], stream: true });
for await (const c of s) {}
console.log('stream meta', JSON.stringify(s.meta));
await show('models', gw.models.list());
await show('embed', gw.embeddings.create({ model: 'local-embed', input: 'x' }));
await show('rerank', gw.rerank.create({ model: 'local-rerank', query: 'q', documents: ['a', 'q'] }));
await show('ocr', gw.ocr.create({ model: 'local-ocr', document: `data:text/plain;base64,${Buffer.from('page one').toString('base64')}` }));
const v: any = await gw.videos.create({ model: 'local-video', prompt: 'waves', seconds: 1 });
await show('video retrieve', gw.videos.retrieve(v.id));
await new Promise((r) => setTimeout(r, 1500));
await show('video retrieve2', gw.videos.retrieve(v.id));
await show('video content', gw.videos.content(v.id));
await show('balance', gw.credits.balance());
await show('history', gw.credits.history({ limit: 2 }));
await show('pricing', gw.pricing.list());
await show('guardrails', gw.guardrails.list());
await show('prompts', gw.prompts.list());
await show('channels', gw.channels.create({ name: 'x', channel_type: 'webhook', config: { url: 'https://hooks.example.com/x' } }));
await running.close();
