import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restRouter } from '../src/rest/router.ts';
import { http } from './helpers/app.ts';
import type { Json } from './helpers/app.ts';
import type { Linked } from './helpers/sandbox.ts';
import { linkSession, startWithSandbox } from './helpers/sandbox.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every method and path the Express routers answer, walked from the router's stack (nested routers included). */
const expressRoutes = (router: Router): string[] => {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const [method, on] of Object.entries(layer.route.methods))
          if (on && method !== '_all') found.push(`${method.toUpperCase()} ${layer.route.path}`);
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: Layer[] }).stack);
  return found;
};

const toOpenApi = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** Whether an Express path (plain `:param` segments, as every /v1 route has) matches a concrete path. */
const matches = (pattern: string, path: string) => new RegExp(`^${pattern.replace(/:\w+/g, '[^/]+')}/?$`).test(path);

describe('the OpenAPI document at /v1/openapi.json and the reference at /docs', () => {
  let ctx: Linked;
  let doc: Json;
  let ajv: Ajv2020;
  const validators = new Map<string, ValidateFunction>();
  const checked: string[] = [];

  /** Calls a route by its documented path and checks the answer against the documented schema for its status. */
  const call = async (method: string, template: string, params: Record<string, string>, body?: unknown) => {
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name] ?? ''));
    const query = params.query ? `?${params.query}` : '';
    const res = await http(ctx.app.baseUrl, method, `/v1${path}${query}`, { key: ctx.key, body });
    const operation = doc.paths[template]?.[method.toLowerCase()];
    expect(operation, `${method} ${template} is documented`).toBeDefined();
    const documented = operation.responses[String(res.status)] ?? operation.responses[`${String(res.status)[0]}XX`];
    expect(documented, `${method} ${template} documents status ${res.status}`).toBeDefined();
    const schema = documented.content['application/json'].schema;
    const key = `${method} ${template} ${res.status}`;
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile({ ...schema, components: doc.components });
      validators.set(key, validate);
    }
    const valid = validate(res.body);
    expect(valid, `${key}: ${JSON.stringify(validate.errors)} in ${JSON.stringify(res.body).slice(0, 500)}`).toBe(true);
    checked.push(key);
    return res;
  };

  beforeAll(async () => {
    ctx = await startWithSandbox('sqlite');
    const res = await http(ctx.app.baseUrl, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await ctx?.sandbox.close();
  });

  it('is OpenAPI 3.1, public, and documents exactly the routes Express serves', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: '/v1' }]);
    expect(doc.components.securitySchemes.apiKey).toEqual({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const served = expressRoutes(restRouter(ctx.app.deps)).map((r) => {
      const [method, path] = r.split(' ');
      return `${method} ${toOpenApi(path ?? '')}`;
    });
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(served.length).toBeGreaterThan(60);
    expect(new Set(served).size).toBe(served.length);
    expect([...documented].sort()).toEqual([...served].sort());
    // Express tries routes in order and the first match answers: none may be shadowed by one before it
    // (`/contacts/:jid` mounted ahead of `/contacts/groups` would read "groups" as a JID).
    const inOrder = expressRoutes(restRouter(ctx.app.deps)).map((r) => r.split(' ') as [string, string]);
    for (const [method, path] of inOrder) {
      const concrete = path.replace(/:(\w+)/g, 'p-$1');
      const first = inOrder.find(([m, p]) => m === method && matches(p, concrete));
      expect(first?.[1], `${method} ${path} is answered by itself`).toBe(path);
    }
    // Every $ref resolves and every schema compiles.
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const response of Object.values(op.responses as Record<string, Json>)) {
          // JSON, or a file route's one content of any type
          const content = response.content['application/json'] ?? response.content['*/*'];
          ajv.compile({ ...content.schema, components: doc.components });
        }
        if (op.requestBody) ajv.compile({ ...op.requestBody.content['application/json'].schema, components: doc.components });
        expect(op.summary, `${method} ${path}`).toBeTruthy();
      }
    }
  });

  it('serves Swagger UI from its own assets, pointed at the document', async () => {
    const page = await fetch(`${ctx.app.baseUrl}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<script src="/docs/swagger-ui-bundle.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const init = await (await fetch(`${ctx.app.baseUrl}/docs/init.js`)).text();
    expect(init).toContain("url: '/v1/openapi.json'");
    for (const asset of ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css']) {
      const res = await fetch(`${ctx.app.baseUrl}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    }
  });

  it('describes what the routes really answer, driven end to end through the sandbox', async () => {
    const me = '15559990001';
    const friend = '15559990002';
    await call('GET', '/accounts/me', {});
    const sessionId = await linkSession(ctx, me);
    ctx.sandbox.control.addPhone(friend);
    const s = { sessionId };
    await call('GET', '/sessions', {});
    await call('GET', '/sessions/{sessionId}', s);
    await call('GET', '/sessions/{sessionId}/status', { ...s, query: 'waitFor=CONNECTED&waitMs=1000' });
    await call('GET', '/sessions/{sessionId}/qrcode', s);
    await call('PATCH', '/sessions/{sessionId}', s, { sessionName: 'renamed' });
    const sent = await call('POST', '/sessions/{sessionId}/send', s, { to: friend, message: 'documented' });
    await call('GET', '/sessions/{sessionId}/messages', s);
    await call('GET', '/sessions/{sessionId}/messages/{messageId}', { ...s, messageId: sent.body.id });
    await ctx.sandbox.control.sendText(friend, me, 'an answer');
    const photo = await ctx.sandbox.control.sendMedia(friend, me, { type: 'image', data: Buffer.from('a photo'), mimetype: 'image/png' });
    const incoming = await call('GET', '/sessions/{sessionId}/incoming', { ...s, query: 'waitMs=10000' });
    if (incoming.body.count < 2) await call('GET', '/sessions/{sessionId}/incoming', { ...s, query: 'waitMs=10000' });
    // The file itself is not JSON: its documented answer is any content type.
    const mediaPath = '/sessions/{sessionId}/incoming/{messageId}/media';
    expect(Object.keys(doc.paths[mediaPath].get.responses['200'].content)).toEqual(['*/*']);
    const file = await fetch(`${ctx.app.baseUrl}/v1/sessions/${sessionId}/incoming/${photo.id}/media`, {
      headers: { 'x-api-key': ctx.key },
    });
    expect([file.status, file.headers.get('content-type'), await file.text()]).toEqual([200, 'image/png', 'a photo']);
    await call('GET', mediaPath, { ...s, messageId: 'unknown' });
    await call('POST', '/sessions/{sessionId}/messages/schedule', s, { to: friend, message: 'later', delayMs: 60_000 });
    await call('POST', '/sessions/{sessionId}/messages/recurring', s, { to: friend, message: 'again', everyMs: 3_600_000 });
    await call('GET', '/sessions/{sessionId}/messages/recurring', s);
    const group = await call('POST', '/sessions/{sessionId}/groups', s, { subject: 'Documented', participants: [friend] });
    await call('GET', '/sessions/{sessionId}/groups', s);
    await call('GET', '/sessions/{sessionId}/groups/{groupId}', { ...s, groupId: group.body.id });
    await call('POST', '/sessions/{sessionId}/groups/{groupId}/send', { ...s, groupId: group.body.id }, { message: 'to the group' });

    await call('POST', '/contacts', {}, { phone: friend, name: 'Friend', tags: ['vip'] });
    // The same contact again merges: 200, not 201.
    expect((await call('POST', '/contacts', {}, { phone: friend, name: 'Friend' })).status).toBe(200);
    await call('GET', '/contacts', { query: 'search=friend' });
    await call('GET', '/contacts/{jid}', { jid: `${friend}@s.whatsapp.net` });
    await call('PATCH', '/contacts/{jid}', { jid: `${friend}@s.whatsapp.net` }, { name: 'Best friend' });
    await call('POST', '/contacts/bulk', {}, { contacts: [{ phone: '15559990003', name: 'Third' }, { phone: 'x' }] });
    const cg = await call('POST', '/contacts/groups', {}, { name: 'Friends' });
    await call('GET', '/contacts/groups', {});
    await call('POST', '/contacts/groups/{groupId}/members', { groupId: cg.body.id }, { jids: [`${friend}@s.whatsapp.net`] });

    // Errors, in the decided shape.
    await call('GET', '/sessions/{sessionId}', { sessionId: 'missing' });
    await call('POST', '/sessions', {}, { name: '' });
    await call('POST', '/sessions/{sessionId}/disconnect', s);
    await call('POST', '/sessions/{sessionId}/send', s, { to: friend, message: 'not connected' });
    await call('DELETE', '/contacts/{jid}', { jid: `${friend}@s.whatsapp.net` });
    await call('DELETE', '/sessions/{sessionId}', s);
    expect(checked.filter((c) => c.endsWith(' 200') || c.endsWith(' 201')).length).toBeGreaterThanOrEqual(25);
    expect(checked.some((c) => / 4\d\d$/.test(c))).toBe(true);
  });
});
