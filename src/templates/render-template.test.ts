import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../errors/gateway-error.js';
import { checkTemplateSource } from './check-template-source.js';
import { createTemplateRenderer } from './render-template.js';

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
