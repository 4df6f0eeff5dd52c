import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { checkTemplateSource } from './check-template-source.js';
import { createTemplateRenderer } from './render-template.js';
import { templateVersionSchema } from './template-input-schema.js';

const renderer = createTemplateRenderer();
const render = (content: string, variables: Record<string, unknown> = {}) => renderer.render([{ role: 'user', content }], variables)[0].content;

test('renders Jinja2-style placeholders, loops, conditions and filters', () => {
  assert.equal(render('Hello {{ name | title }}!', { name: 'ada lovelace' }), 'Hello Ada Lovelace!');
  assert.equal(render('{% for item in items %}{{ loop.index }}.{{ item.label }} {% endfor %}', { items: [{ label: 'a' }, { label: 'b' }] }), '1.a 2.b ');
  assert.equal(render('{% if vip %}VIP{% else %}std{% endif %}', { vip: false }), 'std');
  assert.equal(render('{{ tone | default("neutral") }}'), 'neutral');
  assert.equal(render('{% if extra is defined %}{{ extra }}{% endif %}done'), 'done');
  assert.equal(render('<b>{{ x }}</b>', { x: '<i>' }), '<b><i></b>', 'no HTML escaping in prompts');
});

test('variables are data: template syntax inside a value is not evaluated', () => {
  assert.equal(render('{{ q }}', { q: '{{ 7 * 7 }} {% for x in y %}' }), '{{ 7 * 7 }} {% for x in y %}');
});

test('a missing variable is a 400 naming it', () => {
  assert.throws(
    () => render('Hi {{ name }}, about {{ topic }}', { name: 'x' }),
    (error: unknown) => error instanceof GatewayError && error.code === 'missing_template_variable' && error.message.includes('"topic"'),
  );
});

const missingVariableNamed = (name: string) => (error: unknown) =>
  error instanceof GatewayError && error.code === 'missing_template_variable' && error.message.includes(`"${name}"`);

test('a missing name that is only tested reads as false, and the branch it guards needs no value', () => {
  assert.equal(render('{% if name %}Hi {{ name }}!{% endif %}done'), 'done');
  assert.equal(render('{% if name %}Hi {{ name }}!{% endif %}', { name: 'Ada' }), 'Hi Ada!');
  assert.equal(render('{% if user.name %}{{ user.name }}{% else %}anon{% endif %}'), 'anon');
  assert.equal(render('{% if a and b %}{{ a }}{{ b }}{% endif %}.', { a: 1 }), '.');
  assert.equal(render('{{ name if name else "anon" }}'), 'anon');
  assert.equal(render('{% if not vip %}std{% endif %}'), 'std');
  assert.equal(render('{% if (x is defined) and x %}{{ x }}{% endif %}-', {}), '-');
});

test('a name used outside what guards it is still required', () => {
  assert.throws(() => render('{% if name %}{% endif %}{{ name }}'), missingVariableNamed('name'));
  assert.throws(() => render('{% if a or b %}{{ a }}{% endif %}', { b: 1 }), missingVariableNamed('a'));
  assert.throws(() => render('{{ x | default("y") }} {{ x }}'), missingVariableNamed('x'));
  assert.throws(() => render('{% for item in items %}{{ item }}{% endfor %}'), missingVariableNamed('items'));
  assert.throws(() => render('{% if count > 2 %}many{% endif %}'), missingVariableNamed('count'));
});

test('a printed field that is missing or null is a 400 naming its path', () => {
  assert.throws(() => render('Dear {{ user.name }}', { user: {} }), missingVariableNamed('user.name'));
  assert.throws(() => render('x\n  {{ note }}', { note: null }), missingVariableNamed('note'));
  assert.throws(
    () => render('{% for row in rows %}{{ row.title }}{% endfor %}', { rows: [{ title: 'a' }, {}] }),
    missingVariableNamed('row.title'),
  );
});

test('loops that would run for too long are stopped with a 400', () => {
  const source = '{% for a in xs %}{% for b in xs %}{% for c in xs %}{{ a }}{% endfor %}{% endfor %}{% endfor %}';
  assert.throws(
    () => render(source, { xs: Array.from({ length: 3000 }, (_, index) => index) }),
    (error: unknown) => error instanceof GatewayError && error.code === 'invalid_request' && /longer than \d+ ms/.test(error.message),
  );
  assert.equal(render(source, { xs: [1, 2] }), '11112222', 'the same template renders small inputs');
  const silent = '{% for a in xs %}{% for b in xs %}{% for c in xs %}{% endfor %}{% endfor %}{% endfor %}done';
  assert.throws(() => render(silent, { xs: Array.from({ length: 3000 }, (_, index) => index) }), /longer than/, 'loops that print nothing are timed too');
  assert.throws(() => render("{{ '' | gw_loop_tick }}"), /filter "gw_loop_tick" is not allowed/, 'the internal clock check is not a template filter');
});

test('the rendered text is capped', () => {
  const small = createTemplateRenderer({ renderedCharsLimit: 1000 });
  assert.throws(
    () => small.render([{ role: 'system', content: 'a' }, { role: 'user', content: '{% for i in xs %}{{ text }}{% endfor %}' }], { xs: [1, 2, 3], text: 'x'.repeat(400) }),
    (error: unknown) => error instanceof GatewayError && error.code === 'payload_too_large' && error.message.includes('1201'),
  );
  assert.equal(small.render([{ role: 'user', content: '{{ text }}' }], { text: 'x'.repeat(1000) })[0]!.content.length, 1000);
});

test('one compiled template serves calls with different variables', () => {
  const source = 'Hello {{ who }}';
  assert.equal(render(source, { who: 'a' }), 'Hello a');
  assert.equal(render(source, { who: 'b' }), 'Hello b');
  assert.throws(() => render(source, {}), missingVariableNamed('who'));
});

test('a version\'s parameters are checked like the caller\'s own', () => {
  const version = (parameters: Record<string, unknown>) => templateVersionSchema.safeParse({ messages: [{ role: 'system', content: 'x' }], parameters });
  assert.ok(version({ temperature: 0.5, stop: ['END'], max_tokens: 100, response_format: { type: 'json_object' }, tool_choice: 'auto' }).success);
  for (const bad of [{ temperature: 'hot' }, { temperature: 3 }, { max_tokens: 0 }, { stop: ['a', 'b', 'c', 'd', 'e'] }, { n: 1.5 }, { tool_choice: 'sometimes' }, { model: 'x' }]) {
    assert.equal(version(bad).success, false, JSON.stringify(bad));
  }
});

test('sandbox escapes are rejected', () => {
  const attempts = [
    '{{ range.constructor("return process")() }}',
    '{{ cycler.constructor("return process")() }}',
    '{{ name.constructor.constructor("return process")() }}',
    '{{ name["constructor"] }}',
    '{{ name[key] }}',
    '{{ name.__proto__ }}',
    '{{ name.toUpperCase() }}',
    '{% include "/etc/passwd" %}',
    '{% import "x" as y %}',
    '{% extends "base" %}',
    '{% macro m() %}x{% endmacro %}',
    '{{ x | center(100000000) }}',
    '{{ range(10) }}',
  ];
  for (const source of attempts) {
    assert.throws(() => render(source, { name: 'n', key: 'constructor', x: 'x' }), GatewayError, source);
  }
});

test('required variables exclude loop and set bindings', () => {
  const { requiredVariables } = checkTemplateSource('{% set greeting = "hi" %}{{ greeting }} {% for k, v in pairs %}{{ k }}{{ v }}{{ loop.index }}{% endfor %}');
  assert.deepEqual([...requiredVariables], ['pairs']);
});
