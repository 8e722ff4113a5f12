import { useEffect, useId, useState } from 'react';
import { formatDate } from '../../app/src/format.ts';
import { LoadFailed } from '../../app/src/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import { followLink, hrefOf, navigate } from './router.ts';
import type { PolicyRow } from './types.ts';
import { Loading, TableBox } from './ui.tsx';

const MIN_QUERY = 2;

/** Policies across every company, by reference, name, email, registration or postcode. */
export function SearchPage({ q }: { q: string }) {
  const { api } = useConsole();
  const [text, setText] = useState(q);
  const [environment, setEnvironment] = useState('');
  const id = useId();
  useEffect(() => {
    setText(q);
  }, [q]);
  const query = q.trim();
  const results = useLoad(
    query.length >= MIN_QUERY
      ? () =>
          api.get<{ data: PolicyRow[] }>('/admin/policies', {
            query: { q: query, environment: environment === '' ? undefined : environment, limit: 50 },
          })
      : undefined,
    `${query}|${environment}`,
  );
  const rows = results.data?.data ?? [];

  return (
    <>
      <h1>Search policies</h1>
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
            value={environment}
            onChange={(event) => {
              setEnvironment(event.target.value);
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
            {rows.length === 0
              ? `No policies match “${query}”`
              : `${rows.length} ${rows.length === 1 ? 'policy matches' : 'policies match'} “${query}”`}
          </h2>
          {rows.length === 0 ? null : (
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
                  {rows.map((row) => {
                    const target = {
                      page: 'policy',
                      companyReference: row.company_reference,
                      environment: row.environment,
                      policyReference: row.policy_reference,
                    } as const;
                    return (
                      <tr key={`${row.company_reference}/${row.environment}/${row.policy_reference}`}>
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
                  })}
                </tbody>
              </table>
            </TableBox>
          )}
        </section>
      )}
    </>
  );
}
