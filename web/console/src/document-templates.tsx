import { useEffect, useId, useState, type ChangeEvent } from 'react';
import { unwrap } from '../../../sdk/src/client.ts';
import { formatDateTime } from '../../shared/format.ts';
import { LoadFailed, PageMessages } from '../../shared/messages.tsx';
import { useConsole, useLoad } from './console-context.tsx';
import type { DocumentTemplate, Tenant } from './api-types.ts';
import { DataTable } from './data-table.tsx';
import { base64Of, dataUrlOf } from './data-url.ts';
import { ConfirmDialog, Field, ForTenant, Loading, textOf, useNotice } from './ui.tsx';

type LogoMediaType = 'image/png' | 'image/svg+xml';
const LOGO_TYPES: readonly LogoMediaType[] = ['image/png', 'image/svg+xml'];

const scopeOf = (template: DocumentTemplate): string =>
  template.product_reference === null ? 'Company-wide' : `Product ${template.product_reference}`;

/** The company's document templates: every version, with its logo, and adding one. */
export function DocumentTemplatesPage() {
  return (
    <>
      <h1>Document templates</h1>
      <ForTenant>
        {(tenant) => (
          <Templates key={`${tenant.company.company_reference}/${tenant.environment}`} tenant={tenant} />
        )}
      </ForTenant>
    </>
  );
}

/** A version's logo, read with the console's credentials and shown as an image. */
function LogoPreview({ tenant, template }: { tenant: Tenant; template: DocumentTemplate }) {
  const { api } = useConsole();
  const [src, setSrc] = useState<string | undefined>();
  const [failed, setFailed] = useState(false);
  const logo = template.logo;
  useEffect(() => {
    if (logo === null) return;
    let live = true;
    unwrap(
      api.forTenant(tenant).GET('/document-templates/{version}/logo', {
        params: { path: { version: String(template.version) } },
        parseAs: 'blob',
      }),
    )
      .then((blob) => dataUrlOf(blob, logo.media_type))
      .then(
        (url) => {
          if (live) setSrc(url);
        },
        () => {
          if (live) setFailed(true);
        },
      );
    return () => {
      live = false;
    };
  }, [api, tenant, template.version, logo]);
  if (logo === null) return <span className="hint">No logo</span>;
  if (failed) return <span className="hint">The logo could not be loaded.</span>;
  if (src === undefined) return <span className="hint">Loading the logo…</span>;
  return (
    <img
      className="logo-preview"
      src={src}
      alt={`Logo of version ${String(template.version)} (${logo.media_type === 'image/png' ? 'PNG' : 'SVG'}, ${String(logo.width_px)}×${String(logo.height_px)})`}
    />
  );
}

function Templates({ tenant }: { tenant: Tenant }) {
  const { api } = useConsole();
  const templates = useLoad(() => unwrap(api.forTenant(tenant).GET('/document-templates')), 'templates');
  const products = useLoad(() => unwrap(api.forTenant(tenant).GET('/products')), 'products');
  const messages = useNotice();
  const [creating, setCreating] = useState(false);
  if (templates.error !== undefined)
    return <LoadFailed what="The templates" error={templates.error} onRetry={templates.reload} />;
  if (templates.data === undefined) return <Loading what="templates" />;
  const { defaults } = templates.data;
  const list = templates.data.templates;
  const latestWide = list.find((t) => t.product_reference === null);
  return (
    <>
      <PageMessages error={messages.error} notice={messages.notice} noticeRef={messages.noticeRef} />
      <p>
        Documents show the version in effect on the day they are made: the product’s own, else the
        company-wide one, else {defaults.company_name}’s defaults. Issued documents never change.
      </p>
      <p>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setCreating(true);
          }}
        >
          Add a version
        </button>
      </p>
      {list.length === 0 ? (
        <p className="empty">
          {tenant.company.name} has no templates in {tenant.environment}: documents use the defaults (
          {defaults.company_name}, colour {defaults.colour_hex}, no logo).
        </p>
      ) : (
        <DataTable
          label="Template versions"
          rows={list}
          rowKey={(template) => String(template.version)}
          columns={[
            {
              header: 'Version',
              cell: (template) => (
                <>
                  {template.version}
                  {template.in_effect ? (
                    <>
                      <br />
                      <span className="status status-active">in effect</span>
                    </>
                  ) : null}
                </>
              ),
            },
            { header: 'For', cell: scopeOf },
            {
              header: 'From',
              nowrap: true,
              cell: (template) => (
                <>
                  {template.effective_from}
                  <br />
                  <span className="hint">added {formatDateTime(template.created_at)}</span>
                </>
              ),
            },
            {
              header: 'Names',
              cell: (template) => (
                <>
                  {template.company_name}
                  <br />
                  <span className="hint">Insurer: {template.insurer_name}</span>
                </>
              ),
            },
            {
              header: 'Colour',
              nowrap: true,
              cell: (template) => (
                <>
                  <span className="swatch" style={{ background: template.colour_hex }} aria-hidden="true" />{' '}
                  {template.colour_hex}
                </>
              ),
            },
            { header: 'Logo', cell: (template) => <LogoPreview tenant={tenant} template={template} /> },
          ]}
        />
      )}
      {creating ? (
        <CreateDialog
          tenant={tenant}
          productReferences={(products.data?.products ?? []).map((p) => p.product_reference)}
          start={latestWide ?? { ...defaults }}
          onClose={() => {
            setCreating(false);
          }}
          onCreated={(created) => {
            messages.setNotice(
              `Version ${String(created.version)} (${scopeOf(created).toLowerCase()}) applies from ${created.effective_from}.`,
            );
            templates.reload();
          }}
        />
      ) : null}
    </>
  );
}

/** The chosen logo file, read, with a preview; undefined while none is chosen. */
interface ChosenLogo {
  readonly mediaType: LogoMediaType;
  readonly base64: string;
  readonly preview: string;
  readonly name: string;
}

function CreateDialog(props: {
  tenant: Tenant;
  productReferences: readonly string[];
  start: { company_name: string; insurer_name: string; colour_hex: string };
  onClose: () => void;
  onCreated: (created: DocumentTemplate) => void;
}) {
  const { api } = useConsole();
  const id = useId();
  const [logo, setLogo] = useState<ChosenLogo | undefined>();
  return (
    <ConfirmDialog
      title="Add a template version"
      confirmLabel="Add the version"
      onClose={props.onClose}
      onConfirm={async (fields) => {
        const product = textOf(fields, 'product_reference');
        const effectiveFrom = textOf(fields, 'effective_from');
        const created = await unwrap(
          api.forTenant(props.tenant).POST('/document-templates', {
            body: {
              ...(product === '' ? {} : { product_reference: product }),
              ...(effectiveFrom === '' ? {} : { effective_from: effectiveFrom }),
              company_name: textOf(fields, 'company_name'),
              insurer_name: textOf(fields, 'insurer_name'),
              colour_hex: textOf(fields, 'colour_hex'),
              ...(logo === undefined
                ? {}
                : { logo: { media_type: logo.mediaType, data_base64: logo.base64 } }),
            },
          }),
        );
        props.onCreated(created);
      }}
    >
      <div className="field">
        <label htmlFor={`${id}-product`}>For</label>
        <select id={`${id}-product`} name="product_reference" defaultValue="">
          <option value="">Every product (company-wide)</option>
          {props.productReferences.map((reference) => (
            <option key={reference} value={reference}>
              Product {reference}
            </option>
          ))}
        </select>
      </div>
      <Field
        label="Effective from"
        name="effective_from"
        type="date"
        hint="The day (UK time) documents start using it; empty for today."
      />
      <Field
        label="Company name"
        name="company_name"
        required
        maxLength={120}
        defaultValue={props.start.company_name}
      />
      <Field
        label="Insurer name"
        name="insurer_name"
        required
        maxLength={120}
        defaultValue={props.start.insurer_name}
      />
      <Field
        label="Colour"
        name="colour_hex"
        required
        pattern="#[0-9A-Fa-f]{6}"
        maxLength={7}
        hint="As #rrggbb, e.g. #1f4e79."
        defaultValue={props.start.colour_hex}
      />
      <LogoField onChosen={setLogo} />
    </ConfirmDialog>
  );
}

/** The logo file input: the file read as base64, with a preview, or why it cannot be used. */
function LogoField({ onChosen }: { onChosen: (logo: ChosenLogo | undefined) => void }) {
  const id = useId();
  const [logo, setLogoState] = useState<ChosenLogo | undefined>();
  const setLogo = (chosen: ChosenLogo | undefined) => {
    setLogoState(chosen);
    onChosen(chosen);
  };
  const [logoProblem, setLogoProblem] = useState<string | undefined>();
  const chooseLogo = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setLogo(undefined);
    setLogoProblem(undefined);
    if (file === undefined) return;
    const mediaType = LOGO_TYPES.find((type) => type === file.type);
    if (mediaType === undefined) {
      setLogoProblem(`${file.name} is neither a PNG nor an SVG file.`);
      return;
    }
    file.arrayBuffer().then(
      (buffer) => {
        const base64 = base64Of(new Uint8Array(buffer));
        setLogo({ mediaType, base64, preview: `data:${mediaType};base64,${base64}`, name: file.name });
      },
      () => {
        setLogoProblem(`${file.name} could not be read.`);
      },
    );
  };
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-logo`}>Logo (PNG or SVG, at most 256 KB)</label>
        <span className="hint" id={`${id}-logo-hint`}>
          Without one, the version has no logo.
        </span>
        <input
          id={`${id}-logo`}
          type="file"
          accept="image/png,image/svg+xml"
          aria-describedby={`${id}-logo-hint`}
          onChange={chooseLogo}
        />
      </div>
      {logoProblem === undefined ? null : (
        <p className="message error" role="alert">
          {logoProblem}
        </p>
      )}
      {logo === undefined ? null : (
        <p>
          <img className="logo-preview" src={logo.preview} alt={`The chosen logo, ${logo.name}`} />
        </p>
      )}
    </>
  );
}
