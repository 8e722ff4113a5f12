import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitSqlStatements } from './sql-script.ts';

test('a script splits at each semicolon outside strings, identifiers, bodies and comments', () => {
  const script = `
--
-- Name: f(); Type: FUNCTION
--
SET check_function_bodies = false;
CREATE FUNCTION public.f() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
    begin
      raise exception 'no; never' using errcode = 'P0001';
    end $$;
COMMENT ON TABLE public."odd;name" IS 'it''s; fine';
/* a block; comment */ SELECT E'a\\'; b', $body$ x; $$ y $body$;
DO $tag$ begin perform 1; end $tag$
`;
  assert.deepEqual(splitSqlStatements(script), [
    'SET check_function_bodies = false',
    "CREATE FUNCTION public.f() RETURNS trigger\n    LANGUAGE plpgsql\n    AS $$\n    begin\n      raise exception 'no; never' using errcode = 'P0001';\n    end $$",
    `COMMENT ON TABLE public."odd;name" IS 'it''s; fine'`,
    "SELECT E'a\\'; b', $body$ x; $$ y $body$",
    'DO $tag$ begin perform 1; end $tag$',
  ]);
});

test('a positional parameter is not taken for a dollar quote, and an unterminated body is an error', () => {
  assert.deepEqual(splitSqlStatements('select $1; select 2;'), ['select $1', 'select 2']);
  assert.throws(() => splitSqlStatements('select $$ never closed;'), /unterminated \$\$/);
  assert.throws(() => splitSqlStatements("select 'open;"), /unterminated '/);
});
