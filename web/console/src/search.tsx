import { useEffect, useId, useState } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDate } from '../../shared/format.ts';
import { LoadFailed } from '../../shared/messages.tsx';
import type { Environment, PolicyRow } from './api-types.ts';
import { useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf, navigate, type Route } from './router.ts';
import { Loading, TableBox } from './ui.tsx';

const MIN_QUERY = 2;

/** The environments a search may be narrowed to ('' for both). */
type EnvironmentChoice = Environment | '';
const asChoice = (value: string): EnvironmentChoice =>
  value === 'sandbox' || value === 'production' ? value : '';

/** Policies across every company, by reference, name, email, registration or postcode. */
export function SearchPage({ q }: { q: string }) {
  const { api } = useConsole();
  const [environment, setEnvironment] = useState<EnvironmentChoice>('');
  const id = useId();
  const query = q.trim();
  const results = useLoad(
    query.length >= MIN_QUERY
      ? () =>
          unwrap(
            api.client.GET('/admin/policies', {
              params: { query: { q: query, ...(environment === '' ? {} : { environment }), limit: 50 } },
            }),
          )
      : undefined,
    `${query}|${environment}`,
  );

  return (
    <>
      <h1>Search policies</h1>
      <SearchForm q={q} environment={environment} onEnvironment={setEnvironment} />
      {query.length > 0 && query.length < MIN_QUERY ? (
        <p className="message error" role="alert">
          Type at least {MIN_QUERY} characters.
        </p>
      ) : null}
      {results.error !== undefined ? (
        <LoadFailed what="The results" error={results.error} onRetry={results.reload} />
      ) : results.loading ? (
        <Loading what="results" />
      ) : results.data === undefined ? null : (
        <section aria-labelledby={`${id}-results`}>
          <h2 id={`${id}-results`} role="status">
            {results.data.data.length === 0
              ? `No policies match “${query}”`
              : `${results.data.data.length} ${results.data.data.length === 1 ? 'policy matches' : 'policies match'} “${query}”`}
          </h2>
          {results.data.data.length === 0 ? null : <SearchResults rows={results.data.data} />}
        </section>
      )}
    </>
  );
}

function SearchForm(props: {
  q: string;
  environment: EnvironmentChoice;
  onEnvironment: (environment: EnvironmentChoice) => void;
}) {
  const [text, setText] = useState(props.q);
  const id = useId();
  useEffect(() => {
    setText(props.q);
  }, [props.q]);
  return (
    <form
      role="search"
      className="search"
      onSubmit={(event) => {
        event.preventDefault();
        navigate({ page: 'search', q: text.trim() });
      }}
    >
      <div className="field grow">
        <label htmlFor={`${id}-q`}>Reference, name, email, registration or postcode</label>
        <input
          id={`${id}-q`}
          name="q"
          type="search"
          value={text}
          minLength={MIN_QUERY}
          autoComplete="off"
          onChange={(event) => {
            setText(event.target.value);
          }}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-env`}>Environment</label>
        <select
          id={`${id}-env`}
          value={props.environment}
          onChange={(event) => {
            props.onEnvironment(asChoice(event.target.value));
          }}
        >
          <option value="">Both</option>
          <option value="sandbox">Sandbox</option>
          <option value="production">Production</option>
        </select>
      </div>
      <button type="submit" className="primary">
        Search
      </button>
    </form>
  );
}

function SearchResults({ rows }: { rows: readonly PolicyRow[] }) {
  return (
    <TableBox label="Matching policies">
      <table className="grid" data-testid="search-results">
        <thead>
          <tr>
            <th scope="col">Policy</th>
            <th scope="col">Policyholder</th>
            <th scope="col">Vehicle</th>
            <th scope="col">Postcode</th>
            <th scope="col">Status</th>
            <th scope="col">Company</th>
            <th scope="col">Environment</th>
            <th scope="col">Term</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <ResultRow
              key={`${row.company_reference}/${row.environment}/${row.policy_reference}`}
              row={row}
            />
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

function ResultRow({ row }: { row: PolicyRow }) {
  const target: Route = {
    page: 'policy',
    companyReference: row.company_reference,
    // NOTE: the OpenAPI document types a found policy's environment as any string; the service sends
    // `sandbox` or `production`.
    environment: row.environment === 'production' ? 'production' : 'sandbox',
    policyReference: row.policy_reference,
  };
  return (
    <tr>
      <th scope="row">
        <a
          href={hrefOf(target)}
          onClick={(event) => {
            followLink(event, target);
          }}
        >
          {row.policy_reference}
        </a>
      </th>
      <td>
        {row.policyholder_name}
        <br />
        <span className="hint">{row.email}</span>
      </td>
      <td>
        <span className="reg">{row.vehicle_reg}</span>
      </td>
      <td>{row.postcode}</td>
      <td>
        <span className={`status status-${row.status}`}>{row.status}</span>
      </td>
      <td>{row.company_name}</td>
      <td>
        <span className={`env env-${row.environment}`}>{row.environment}</span>
      </td>
      <td className="nowrap">
        {formatDate(row.start_date)} to {formatDate(row.end_date)}
      </td>
    </tr>
  );
}
