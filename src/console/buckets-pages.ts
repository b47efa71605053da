import type { Bucket } from '../buckets/bucket.js';
import { may } from '../roles/authorization.js';
import { baseErrors, checkbox, errorsFor, type FieldErrors, textField } from './form-fields.js';
import { html, type Html } from './html.js';
import { csrfField, datetime, page, type PageContext } from './layout.js';

/** A bucket's fields as the form holds them (flags as ticked or not). */
export interface BucketFormValues {
  label?: string;
  currency_code?: string;
  monthly_price?: string;
  show_price?: boolean;
  allows_kms?: boolean;
  allows_mak?: boolean;
  allows_own?: boolean;
}

export const BUCKET_FLAGS = [
  ['show_price', 'Show the price'],
  ['allows_kms', 'Allows KMS'],
  ['allows_mak', 'Allows MAK'],
  ['allows_own', 'Allows own licences'],
] as const;

/** Said on every bucket page: what a bucket is in cmi (docs/api.md#billing-buckets). */
const NOTHING_BILLED = html`<p class="hint">A bucket is a label with OnApp's fields, kept so that OnApp clients find them: <strong>cmi bills nothing</strong>, and a price here is charged to no one.</p>`;

const price = (bucket: Bucket) => `${bucket.monthly_price} ${bucket.currency_code}`;
const yesNo = (flag: boolean) => (flag ? 'yes' : 'no');

function bucketFields(values: BucketFormValues, errors: FieldErrors): Html {
  return html`${textField('label', 'Label', values.label, errors, { required: true })}
${textField('currency_code', 'Currency', values.currency_code ?? 'USD', errors, { max: 3, hint: 'Three capital letters (ISO 4217), e.g. USD.' })}
${textField('monthly_price', 'Monthly price', values.monthly_price ?? '0', errors, { max: 32, hint: 'Shown to OnApp clients; nothing is charged.' })}
<fieldset class="flags"><legend>Flags</legend>
${BUCKET_FLAGS.map(([name, label]) => html`${checkbox(name, 'true', label, values[name] ?? false, { id: name })}${errorsFor(errors, name)}`)}
</fieldset>`;
}

export interface BucketsListView {
  buckets: Bucket[];
  total: number;
  page: number;
  perPage: number;
  notice?: string;
}

export function bucketsListPage(context: PageContext, view: BucketsListView): Html {
  const pages = Math.max(1, Math.ceil(view.total / view.perPage));
  const link = (n: number) => (n > 1 ? `/console/buckets?page=${n}` : '/console/buckets');
  return page(context, 'Billing buckets', html`<h1>Billing buckets</h1>
${NOTHING_BILLED}
${may(context.viewer, 'buckets.create') ? html`<p><a class="button" href="/console/buckets/new">New bucket</a></p>` : ''}
<p class="total">${view.total} ${view.total === 1 ? 'bucket' : 'buckets'}</p>
${view.buckets.length === 0 ? html`<p class="empty">No buckets on this page.</p>` : html`<div class="scroll"><table class="buckets">
<thead><tr><th scope="col">Label</th><th scope="col" class="number">Monthly price</th>${BUCKET_FLAGS.map(([, label]) => html`<th scope="col">${label}</th>`)}</tr></thead>
<tbody>${view.buckets.map((b) => html`<tr>
<td><a href="/console/buckets/${b.id}">${b.label}</a></td><td class="number">${price(b)}</td>${BUCKET_FLAGS.map(([name]) => html`<td>${yesNo(b[name])}</td>`)}</tr>`)}</tbody>
</table></div>`}
${pages > 1 || view.page > 1 ? html`<nav class="pager" aria-label="Pages">${view.page > 1 ? html`<a rel="prev" href="${link(view.page - 1)}">← Previous</a>` : ''}
<span>Page ${view.page} of ${pages}</span>${view.page < pages ? html`<a rel="next" href="${link(view.page + 1)}">Next →</a>` : ''}</nav>` : ''}`,
  view.notice ? html`${view.notice}` : undefined);
}

export function newBucketPage(context: PageContext, values: BucketFormValues, errors: FieldErrors): Html {
  return page(context, 'New bucket', html`<p class="crumbs"><a href="/console/buckets">← Billing buckets</a></p>
<h1>New bucket</h1>
${NOTHING_BILLED}
${baseErrors(errors)}
<form method="post" action="/console/buckets" class="stacked">${csrfField(context.csrf)}
${bucketFields(values, errors)}
<button type="submit">Create bucket</button>
</form>`);
}

export interface BucketView {
  bucket: Bucket;
  values: BucketFormValues;
  errors: FieldErrors;
  refusal?: string[];
  notice?: string;
}

export function bucketPage(context: PageContext, view: BucketView): Html {
  const { bucket } = view;
  return page(context, bucket.label, html`<p class="crumbs"><a href="/console/buckets">← Billing buckets</a></p>
<h1>${bucket.label}</h1>
${NOTHING_BILLED}
${view.refusal ? html`<div class="error" role="alert">${view.refusal.map((m) => html`<p>${m}</p>`)}</div>` : ''}
<dl class="fields">
<dt>Monthly price</dt><dd>${price(bucket)}</dd>
${BUCKET_FLAGS.map(([name, label]) => html`<dt>${label}</dt><dd>${yesNo(bucket[name])}</dd>`)}
<dt>Created</dt><dd>${datetime(bucket.created_at)}</dd>
<dt>Updated</dt><dd>${datetime(bucket.updated_at)}</dd>
</dl>
${may(context.viewer, 'buckets.delete') ? html`<div class="actions"><a class="button danger" href="/console/buckets/${bucket.id}/delete">Delete…</a></div>` : ''}
${may(context.viewer, 'buckets.update') ? html`<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${baseErrors(view.errors)}
<form method="post" action="/console/buckets/${bucket.id}" class="stacked">${csrfField(context.csrf)}
${bucketFields(view.values, view.errors)}
<button type="submit">Save</button>
</form>
</section>` : ''}`, view.notice ? html`${view.notice}` : undefined);
}

export function confirmDeleteBucketPage(context: PageContext, bucket: Bucket): Html {
  return page(context, 'Delete bucket', html`<h1>Delete ${bucket.label}?</h1>
<p>The bucket goes for good. A bucket that users belong to cannot be deleted: move them to another first.</p>
<form method="post" action="/console/buckets/${bucket.id}/delete">${csrfField(context.csrf)}
<button type="submit" class="danger">Delete</button> <a href="/console/buckets/${bucket.id}">Cancel</a></form>`);
}
