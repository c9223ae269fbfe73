import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsCustomer } from '@obmen/shared/ops-customers';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../../lib/api.ts';
import { FieldNote, FormError } from '../FormParts.tsx';
import { useDisplayDateTime } from '../IslandRoot.tsx';
import { OpsSubmit, useOpsAction } from './use-ops-action.tsx';

/** Operators' notes on the customer, newest first, and a form to add one (notes are never edited). */
export function OpsCustomerNotes({ customer, onDone }: { customer: TOpsCustomer; onDone: () => void }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const [text, setText] = useState('');
  const { sending, error, fields, submit } = useOpsAction();
  const fieldError = fields.text;

  const onSubmit = (event: FormEvent<HTMLFormElement>) =>
    submit(event, async () => {
      await api(CALLS['POST /api/ops/customers/{account_id}/notes'], { params: { account_id: customer.account_id }, body: { text } });
      setText('');
      onDone();
      return undefined;
    });

  return (
    <section className="ops-audit" aria-labelledby="ops-notes-title">
      <h2 id="ops-notes-title">{t('ops.notes_title')}</h2>
      <ul className="ops-notes" data-testid="ops-notes">
        {customer.notes.map((note) => (
          <li key={`${note.at}-${note.operator}`}>
            <p>{note.text}</p>
            <p className="ops-wait">
              {note.operator}, {when(note.at)}
            </p>
          </li>
        ))}
      </ul>
      <form className="ops-form" noValidate onSubmit={onSubmit} data-testid="ops-note-form">
        <label className="field">
          <span className="field-label">{t('ops.note_label')}</span>
          <textarea
            name="text"
            rows={3}
            maxLength={2000}
            value={text}
            onChange={(event) => setText(event.target.value)}
            aria-invalid={fieldError ? 'true' : undefined}
            aria-describedby={fieldError ? 'ops-note-error' : undefined}
            data-testid="ops-note-text"
          />
          <FieldNote error={fieldError} errorId="ops-note-error" testId="ops-note-error" />
        </label>
        <FormError text={fieldError ? '' : error} />
        <OpsSubmit label={t('ops.note_submit')} testId="ops-note-submit" sending={sending} outline />
      </form>
    </section>
  );
}
