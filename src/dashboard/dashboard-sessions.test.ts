import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createDashboardSessions, readCookie } from './dashboard-sessions.js';

function fakeReply() {
  const headers: Record<string, string> = {};
  const reply = { header: (name: string, value: string) => ((headers[name] = value), reply) };
  return { reply: reply as unknown as FastifyReply, headers };
}

const store = { getKey: async () => undefined, getOrganization: async () => undefined, getTeam: async () => undefined };

test('the session cookie is Secure over HTTPS, HttpOnly and SameSite=Strict always', () => {
  const sessions = createDashboardSessions({ sessionKey: Buffer.alloc(32, 1), store });
  for (const protocol of ['https', 'http']) {
    const { reply, headers } = fakeReply();
    sessions.start({ protocol } as FastifyRequest, reply, { scope: 'master' });
    const cookie = headers['set-cookie'];
    assert.match(cookie, /^gw_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+/);
    assert.equal(/; Secure/.test(cookie), protocol === 'https');
  }
});

test('a master session resolves for reads, and for writes only with its CSRF token', async () => {
  const sessions = createDashboardSessions({ sessionKey: Buffer.alloc(32, 1), store });
  const { reply, headers } = fakeReply();
  const { csrfToken } = sessions.start({ protocol: 'http' } as FastifyRequest, reply, { scope: 'master' });
  const cookie = headers['set-cookie'].split(';')[0];
  const request = (method: string, extra: Record<string, string> = {}) => ({ method, headers: { cookie, ...extra } }) as unknown as FastifyRequest;
  assert.deepEqual(await sessions.resolve(request('GET')), { scope: 'master' });
  await assert.rejects(sessions.resolve(request('POST')), /x-csrf-token/);
  assert.deepEqual(await sessions.resolve(request('DELETE', { 'x-csrf-token': csrfToken })), { scope: 'master' });
  assert.equal(await sessions.resolve({ method: 'GET', headers: {} } as FastifyRequest), undefined);
});

test('readCookie finds one cookie among several', () => {
  assert.equal(readCookie('a=1; gw_session=abc.def; b=2', 'gw_session'), 'abc.def');
  assert.equal(readCookie('a=1', 'gw_session'), undefined);
  assert.equal(readCookie(undefined, 'gw_session'), undefined);
});
