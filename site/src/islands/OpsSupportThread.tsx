import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import type { TOpsSavedReply, TOpsSupportItem, TOpsSupportMessage } from '@obmen/shared/ops-support';
import { FILE_INPUT_ACCEPT, FILES_MAX_PER_REQUEST } from '@obmen/shared/files';
import { CALLS } from '@obmen/shared/calls';
import { api, ApiError } from '../lib/api.ts';
import { uploadForm } from '../lib/upload.ts';
import { fileSize, MessageText } from './ChatThread.tsx';
import { useDisplayDateTime } from './IslandRoot.tsx';
import { ClaimNote } from './OpsSupportList.tsx';

/*
 * One conversation on the desk: its messages (the customer's files inline, each view audited by
 * the core), the claim, close or reopen, and the reply with files and saved replies.
 */

type TProps = {
  item: TOpsSupportItem;
  messages: TOpsSupportMessage[];
  replies: TOpsSavedReply[];
  locale: string;
  /** After any change: the desk reloads this conversation and the list. */
  onChanged: () => void;
  onBack: () => void;
};

function DeskMessage({ message, locale }: { message: TOpsSupportMessage; locale: string }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  return (
    <li className={`chat-message ${message.author === 'customer' ? 'chat-other' : 'chat-me'}`} data-testid="desk-message">
      <div className="chat-meta">
        <span className="chat-author">{message.author === 'customer' ? t('ops.support_customer') : t('ops.support_operator')}</span>
        <time dateTime={message.created_at}>{when(message.created_at, 'short')}</time>
      </div>
      {message.text && <MessageText text={message.text} />}
      {message.files.length > 0 && (
        <ul className="chat-files">
          {message.files.map((file) => (
            <li key={file.id}>
              <a href={file.url} target="_blank" rel="noopener" data-testid="desk-file">
                {file.image ? (
                  <img src={file.url} alt={t('ops.support_image_alt')} loading="lazy" className="chat-preview" />
                ) : (
                  t('ops.support_file', { size: fileSize(file.size, locale) })
                )}
              </a>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

export function OpsSupportThread({ item, messages, replies, locale, onChanged, onBack }: TProps) {
  const { t } = useTranslation();
  const [text, setText] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const listRef = useRef<HTMLDivElement>(null);
  const params = { account: item.account_id };
  const heldByOther = item.claim !== null && !item.claim.mine;

  const lastId = messages.at(-1)?.id;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the newest message in view, on open and when one arrives
  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [lastId]);

  async function act(work: () => Promise<unknown>) {
    setBusy(true);
    setError('');
    try {
      await work();
      onChanged();
    } catch (err) {
      const fields = err instanceof ApiError ? Object.values(err.fields) : [];
      setError(fields[0] ?? (err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  function send(event: FormEvent) {
    event.preventDefault();
    if (busy) return;
    void act(async () => {
      if (files.length) {
        const form = new FormData();
        form.set('text', text.trim());
        for (const [index, file] of files.entries()) form.set(`file${index}`, file);
        await uploadForm(CALLS['POST /api/ops/support/{account}/reply'], params, form, () => {});
      } else await api(CALLS['POST /api/ops/support/{account}/reply'], { params, body: { text: text.trim() } });
      setText('');
      setFiles([]);
    });
  }

  const errorId = `desk-error-${item.account_id}`;
  return (
    <section className="desk-thread" aria-labelledby="desk-thread-title" data-testid="desk-thread">
      <div className="desk-thread-head">
        <button type="button" className="btn btn-outline btn-sm desk-back" onClick={onBack} data-testid="desk-back">
          {t('ops.support_back')}
        </button>
        <h2 id="desk-thread-title">{t('ops.support_account', { id: item.account_id })}</h2>
        <ClaimNote item={item} />
        <div className="desk-thread-actions">
          {item.claim?.mine ? (
            <button
              type="button"
              className="btn btn-outline btn-sm"
              disabled={busy}
              onClick={() => act(() => api(CALLS['POST /api/ops/support/{account}/release'], { params }))}
            >
              {t('ops.support_release')}
            </button>
          ) : (
            <button
              type="button"
              className="btn btn-primary btn-sm"
              disabled={busy || heldByOther}
              onClick={() => act(() => api(CALLS['POST /api/ops/support/{account}/claim'], { params }))}
              data-testid="desk-claim"
            >
              {t('ops.support_claim')}
            </button>
          )}
          {item.status === 'open' ? (
            <button
              type="button"
              className="btn btn-outline btn-sm"
              disabled={busy || heldByOther}
              onClick={() => act(() => api(CALLS['POST /api/ops/support/{account}/close'], { params }))}
              data-testid="desk-close"
            >
              {t('ops.support_close')}
            </button>
          ) : (
            <button
              type="button"
              className="btn btn-outline btn-sm"
              disabled={busy}
              onClick={() => act(() => api(CALLS['POST /api/ops/support/{account}/reopen'], { params }))}
              data-testid="desk-reopen"
            >
              {t('ops.support_reopen')}
            </button>
          )}
        </div>
      </div>
      {item.status === 'closed' && <p className="chat-notice">{t('ops.support_closed_note')}</p>}
      <div
        className="chat-messages desk-messages"
        ref={listRef}
        role="log"
        aria-live="polite"
        aria-label={t('ops.support_messages_label')}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
        tabIndex={0}
      >
        <ol className="chat-list">
          {messages.map((message) => (
            <DeskMessage key={message.id} message={message} locale={locale} />
          ))}
        </ol>
      </div>
      <form className="chat-form" onSubmit={send} noValidate>
        <label className="field desk-saved">
          <span className="field-label">{t('ops.support_saved')}</span>
          <select
            value=""
            disabled={heldByOther}
            onChange={(event) => setText(replies.find((reply) => String(reply.id) === event.target.value)?.body ?? text)}
            data-testid="desk-saved"
          >
            <option value="">{t('ops.support_saved_none')}</option>
            {(['ru', 'en'] as const).map((lang) => (
              <optgroup key={lang} label={lang.toUpperCase()}>
                {replies
                  .filter((reply) => reply.locale === lang)
                  .map((reply) => (
                    <option key={reply.id} value={reply.id}>
                      {reply.title}
                    </option>
                  ))}
              </optgroup>
            ))}
          </select>
        </label>
        <label htmlFor="desk-reply" className="chat-label">
          {t('ops.support_reply_label')}
        </label>
        <textarea
          id="desk-reply"
          rows={3}
          maxLength={4000}
          value={text}
          disabled={heldByOther}
          onChange={(event) => setText(event.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          data-testid="desk-reply"
        />
        {files.length > 0 && <p className="muted">{t('ops.support_attached', { names: files.map((file) => file.name).join(', ') })}</p>}
        {error && (
          <p id={errorId} className="field-error" role="alert" data-testid="desk-error">
            {error}
          </p>
        )}
        <div className="chat-actions">
          <label className="btn btn-outline btn-sm chat-attach">
            {t('ops.support_attach')}
            <input
              type="file"
              multiple
              accept={FILE_INPUT_ACCEPT}
              className="visually-hidden"
              disabled={heldByOther}
              data-testid="desk-files"
              onChange={(event) => {
                setFiles([...(event.target.files ?? [])].slice(0, FILES_MAX_PER_REQUEST));
                event.target.value = '';
              }}
            />
          </label>
          <button type="submit" className="btn btn-primary" disabled={busy || heldByOther} data-testid="desk-send">
            {busy ? t('ops.support_sending') : t('ops.support_send')}
          </button>
        </div>
      </form>
    </section>
  );
}
