import { sql, type Kysely } from 'kysely';

/**
 * What a database's schema is, read from its catalogues as sorted lines of text, so two databases can be
 * compared whichever way they were made: tables and their storage options, columns (type, default,
 * nullability, identity, generation), constraints, indexes, triggers, functions, views, sequences,
 * partitions and their bounds, extensions, comments, how many rows each table holds, and the migrations
 * recorded as applied. The job queue's own schema (pg-boss's) is left out: the service installs it.
 *
 * Left out as well: PostgreSQL 18's own names for NOT NULL constraints (`contype = 'n'`; PGlite is
 * 18, the server 15): which columns are NOT NULL is compared through the columns.
 */
export async function catalogue(db: Kysely<unknown>): Promise<Record<string, string[]>> {
  const lines = async (query: ReturnType<typeof sql<{ line: string }>>): Promise<string[]> =>
    (await query.execute(db)).rows.map((row) => row.line).sort();
  const ownRelation = sql`n.nspname = 'public' and not exists (
    select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')`;
  const tables = await lines(sql<{ line: string }>`
    select c.relname || ' ' || c.relkind::text || ' ' || c.relpersistence::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '')
      || ' ' || coalesce(pg_get_partkeydef(c.oid), '') || ' ' || coalesce(obj_description(c.oid, 'pg_class'), '') as line
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation} and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`);
  const columns = await lines(sql<{ line: string }>`
    select c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' '
      || case when a.attnotnull then 'not null' else 'null' end || ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
      || ' identity ' || a.attidentity::text || ' generated ' || a.attgenerated::text
      || ' ' || coalesce(col_description(c.oid, a.attnum), '') as line
    from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
    where ${ownRelation} and c.relkind in ('r', 'p', 'v', 'm', 'f') and a.attnum > 0 and not a.attisdropped`);
  const constraints = await lines(sql<{ line: string }>`
    select c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid) as line
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation} and k.contype <> 'n'`);
  const indexes = await lines(sql<{ line: string }>`
    select pg_get_indexdef(i.indexrelid) || case when i.indisvalid then '' else ' (invalid)' end as line
    from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation}`);
  const triggers = await lines(sql<{ line: string }>`
    select pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text as line
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation} and not t.tgisinternal`);
  const functions = await lines(sql<{ line: string }>`
    select pg_get_functiondef(p.oid) as line
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'public' and p.prokind in ('f', 'p') and not exists (
      select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`);
  const views = await lines(sql<{ line: string }>`
    select c.relname || ' ' || pg_get_viewdef(c.oid) as line
    from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${ownRelation} and c.relkind in ('v', 'm')`);
  const sequences = await lines(sql<{ line: string }>`
    select c.relname || ' ' || format_type(s.seqtypid, null) || ' ' || s.seqstart || ' ' || s.seqincrement || ' '
      || s.seqmax || ' ' || s.seqmin || ' ' || s.seqcache || ' ' || s.seqcycle as line
    from pg_sequence s join pg_class c on c.oid = s.seqrelid join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation}`);
  const partitions = await lines(sql<{ line: string }>`
    select c.relname || ' of ' || p.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) as line
    from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation}`);
  const extensions = await lines(sql<{ line: string }>`select extname as line from pg_extension`);
  const migrations = await lines(sql<{ line: string }>`select name as line from kysely_migration`);
  const rows: string[] = [];
  for (const table of await lines(sql<{ line: string }>`
    select quote_ident(c.relname) as line from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where ${ownRelation} and c.relkind = 'r'`)) {
    const { rows: counted } = await sql<{
      count: string;
    }>`select count(*)::text as count from ${sql.raw(table)}`.execute(db);
    rows.push(`${table} ${counted[0]!.count}`);
  }
  return {
    tables,
    columns,
    constraints,
    indexes,
    triggers,
    functions,
    views,
    sequences,
    partitions,
    extensions,
    migrations,
    rows,
  };
}
