import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from '@nanostores/react';
import type { TChatMessage, TChatSentResponse, TChatThread } from '@obmen/shared';
import { splitLinks } from '@obmen/shared/chat-text';
import { FILE_INPUT_ACCEPT, FILES_MAX_PER_REQUEST } from '@obmen/shared/files';
import { api, ApiError } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { uploadForm } from '../lib/upload.ts';
import { $chatMessageEvent, $chatRead } from '../stores/messages.ts';
import { IslandRoot, useDisplayDateTime, type TIslandProps } from './IslandRoot.tsx';

type TProps = TIslandProps & {
  /** 'support', or the other user's account id. */
  chat: 'support' | number;
  initial: TChatThread;
  /** Private chats: the caller blocked this account. */
  blocked?: boolean;
  closed?: boolean;
  /** Private chats: the other user's name as /api/chat/private/{id} gives it (never the e-mail). */
  title?: string;
};

/** This chat's calls (spec §7 Support / Chat): the support chat's, or a private chat's with its id. */
const SUPPORT_CALLS = { page: CALLS['GET /api/support'], send: CALLS['POST /api/support'], read: CALLS['POST /api/support/read'] } as const;
const PRIVATE_CALLS = {
  page: CALLS['GET /api/chat/private/{id}'],
  send: CALLS['POST /api/chat/private/{id}'],
  read: CALLS['POST /api/chat/private/read/{id}'],
} as const;
function chatCalls(chat: 'support' | number) {
  return chat === 'support' ? { ...SUPPORT_CALLS, params: { id: '' } } : { ...PRIVATE_CALLS, params: { id: chat } };
}

export function fileSize(bytes: number, locale: string): string {
  const kb = bytes / 1024;
  const format = (value: number, unit: string) => `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(value)} ${unit}`;
  return kb < 1024 ? format(Math.max(1, kb), locale === 'ru' ? 'КБ' : 'KB') : format(kb / 1024, locale === 'ru' ? 'МБ' : 'MB');
}

/** Text as text nodes; http(s) links as anchors that open apart from this page. Never HTML. */
/** A chosen file, told apart from the others chosen (the same file chosen twice is kept once). */
const fileKey = (file: File) => `${file.name}\u0000${file.size}\u0000${file.lastModified}`;

export function MessageText({ text }: { text: string }) {
  let at = 0;
  const parts = splitLinks(text).map((part) => {
    const key = at;
    at += part.text.length;
    return { ...part, key };
  });
  return (
    <p className="chat-text">
      {parts.map((part) =>
        part.href ? (
          <a key={part.key} href={part.href} target="_blank" rel="noopener noreferrer nofollow ugc">
            {part.text}
          </a>
        ) : (
          <span key={part.key}>{part.text}</span>
        ),
      )}
    </p>
  );
}

function Message({ message, other, locale }: { message: TChatMessage; other: string; locale: string }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  const author = message.author === 'me' ? t('chat.author_me') : message.author === 'operator' ? t('chat.author_operator') : other;
  return (
    <li className={`chat-message chat-${message.author}`} data-testid="chat-message" data-message-id={message.id}>
      <div className="chat-meta">
        <span className="chat-author">{author}</span>
        <time dateTime={message.created_at}>{when(message.created_at, 'short')}</time>
      </div>
      {message.text && <MessageText text={message.text} />}
      {message.files.length > 0 && (
        <ul className="chat-files">
          {message.files.map((file) => (
            <li key={file.id}>
              {file.image ? (
                <a href={`${file.url}`} target="_blank" rel="noopener" data-testid="chat-file">
                  <img src={file.url} alt={t('chat.image_alt')} loading="lazy" className="chat-preview" />
                </a>
              ) : (
                <a href={file.url} target="_blank" rel="noopener" data-testid="chat-file">
                  {t('chat.file', { size: fileSize(file.size, locale) })}
                </a>
              )}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** One conversation: its messages (older pages on demand), the form, live messages, read cursor. */
function ChatThreadBody({ chat, initial, blocked: initiallyBlocked = false, closed = false, title = String(chat), locale }: Omit<TProps, 'messages'>) {
  const { t } = useTranslation();
  // One object per chat: the hooks below depend on it.
  const route = useMemo(() => chatCalls(chat), [chat]);
  const [messages, setMessages] = useState<TChatMessage[]>(initial.messages);
  const [page, setPage] = useState(initial.page);
  const [pages, setPages] = useState(initial.pages);
  const [text, setText] = useState('');
  const [files, setFiles] = useState<File[]>([]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [blocked, setBlocked] = useState(initiallyBlocked);
  const [reportOpen, setReportOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [notice, setNotice] = useState('');
  const readRef = useRef(initial.last_read_message);
  const listRef = useRef<HTMLDivElement>(null);
  const event = useStore($chatMessageEvent);

  const add = useCallback((incoming: TChatMessage[]) => {
    setMessages((current) => {
      const known = new Set(current.map((message) => message.id));
      const fresh = incoming.filter((message) => !known.has(message.id));
      return fresh.length ? [...current, ...fresh].sort((a, b) => a.id - b.id) : current;
    });
  }, []);

  // Read up to the newest message shown, while the page is visible (one call per move).
  const markRead = useCallback(
    (list: TChatMessage[]) => {
      const newest = list.at(-1)?.id ?? 0;
      if (newest <= readRef.current || document.visibilityState !== 'visible') return;
      readRef.current = newest;
      api(route.read, { params: route.params, body: { last_read_message: newest } })
        .then(() => $chatRead.set({ chat }))
        .catch(() => {
          readRef.current = 0;
        });
    },
    [route, chat],
  );

  useEffect(() => markRead(messages), [messages, markRead]);
  useEffect(() => {
    const onVisible = () => markRead(messages);
    document.addEventListener('visibilitychange', onVisible);
    return () => document.removeEventListener('visibilitychange', onVisible);
  }, [messages, markRead]);

  // Live: a message of this chat (realtime `chat.message`).
  useEffect(() => {
    if (event && event.chat === chat) add([event.message]);
  }, [event, chat, add]);

  // The newest message in view: on open and when one arrives at the bottom.
  const lastId = messages.at(-1)?.id;
  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [lastId]);

  async function loadOlder() {
    const next = page + 1;
    try {
      const older = await api(route.page, { params: route.params, query: { page: next } });
      setPage(next);
      setPages(older.pages);
      add(older.messages);
    } catch (err) {
      setError((err as Error).message);
    }
  }

  async function send(event?: FormEvent) {
    event?.preventDefault();
    if (busy) return;
    const body = text.trim();
    if (!body && !files.length) {
      setError(t('chat.message_empty'));
      return;
    }
    setBusy(true);
    setError('');
    try {
      const field = chat === 'support' ? 'text' : 'message';
      let sent: TChatSentResponse;
      if (files.length) {
        const form = new FormData();
        form.set(field, body);
        files.forEach((file, index) => form.set(`file${index}`, file));
        sent = await uploadForm(route.send, route.params, form, () => {});
      } else {
        sent = await api(route.send, { params: route.params, body: { [field]: body } });
      }
      add([sent.message]);
      setText('');
      setFiles([]);
    } catch (err) {
      const fields = err instanceof ApiError ? Object.values(err.fields) : [];
      setError(fields[0] ?? (err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void send();
  }

  async function toggleBlock() {
    try {
      const answer = await api(CALLS['POST /api/chat/private/block/{id}'], { params: { id: chat }, body: { blocked: !blocked } });
      setBlocked(answer.blocked);
      setError('');
    } catch (err) {
      setError((err as Error).message);
    }
  }

  async function report(event: FormEvent) {
    event.preventDefault();
    try {
      await api(CALLS['POST /api/chat/private/report/{id}'], { params: { id: chat }, body: { reason } });
      setReportOpen(false);
      setReason('');
      setNotice(t('chat.reported'));
    } catch (err) {
      setError((err as Error).message);
    }
  }

  const errorId = `chat-error-${chat}`;
  return (
    <div className="chat-thread" data-testid="chat-thread">
      {chat !== 'support' && (
        <div className="chat-tools">
          <button type="button" className="btn btn-outline btn-sm" onClick={toggleBlock} data-testid="chat-block">
            {blocked ? t('chat.unblock') : t('chat.block')}
          </button>
          {messages.length > 0 && (
            <button
              type="button"
              className="btn btn-outline btn-sm"
              aria-expanded={reportOpen}
              onClick={() => setReportOpen(!reportOpen)}
              data-testid="chat-report"
            >
              {t('chat.report')}
            </button>
          )}
        </div>
      )}
      {reportOpen && (
        <form className="chat-report" onSubmit={report}>
          <label htmlFor={`chat-reason-${chat}`}>{t('chat.report_reason')}</label>
          <textarea id={`chat-reason-${chat}`} value={reason} maxLength={1000} rows={2} onChange={(e) => setReason(e.target.value)} />
          <div className="chat-actions">
            <button type="submit" className="btn btn-primary btn-sm">
              {t('chat.report_send')}
            </button>
            <button type="button" className="btn btn-outline btn-sm" onClick={() => setReportOpen(false)}>
              {t('chat.report_cancel')}
            </button>
          </div>
        </form>
      )}
      {notice && (
        <p className="chat-notice" role="status">
          {notice}
        </p>
      )}
      {blocked && <p className="chat-notice">{t('chat.blocked_note')}</p>}
      {closed && chat === 'support' && <p className="chat-notice">{t('chat.closed')}</p>}
      {page < pages && (
        <button type="button" className="btn btn-outline btn-sm chat-older" onClick={loadOlder}>
          {t('chat.older')}
        </button>
      )}
      {messages.length ? (
        <div
          className="chat-messages"
          ref={listRef}
          role="log"
          aria-live="polite"
          aria-label={t('chat.messages_label')}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
          tabIndex={0}
          data-testid="chat-messages"
        >
          <ol className="chat-list">
            {messages.map((message) => (
              <Message key={message.id} message={message} other={title} locale={locale} />
            ))}
          </ol>
        </div>
      ) : (
        <p className="chat-empty" data-testid="chat-empty">
          {chat === 'support' ? t('chat.support_empty') : t('chat.empty')}
        </p>
      )}
      {!blocked && (
        <form className="chat-form" onSubmit={send} noValidate>
          <label htmlFor={`chat-input-${chat}`} className="chat-label">
            {t('chat.input_label')}
          </label>
          <textarea
            id={`chat-input-${chat}`}
            name="text"
            rows={3}
            maxLength={4000}
            value={text}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={onKeyDown}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : undefined}
            data-testid="chat-input"
          />
          {files.length > 0 && (
            <ul className="chat-pending" aria-label={t('chat.attached', { count: files.length })} data-testid="chat-pending-files">
              {files.map((file) => (
                <li key={fileKey(file)}>
                  <span className="chat-pending-name">{file.name}</span> <span className="muted chat-pending-size">{fileSize(file.size, locale)}</span>
                  <button
                    type="button"
                    className="btn btn-outline btn-sm"
                    aria-label={t('chat.remove_file', { name: file.name })}
                    onClick={() => setFiles((current) => current.filter((kept) => kept !== file))}
                    data-testid="chat-remove-file"
                  >
                    ×
                  </button>
                </li>
              ))}
            </ul>
          )}
          {error && (
            <p id={errorId} className="field-error" role="alert" data-testid="chat-error">
              {error}
            </p>
          )}
          <div className="chat-actions">
            <label className="btn btn-outline btn-sm chat-attach">
              {t('chat.attach')}
              <input
                type="file"
                multiple
                accept={FILE_INPUT_ACCEPT}
                className="visually-hidden"
                data-testid="chat-files"
                onChange={(e) => {
                  const chosen = [...(e.target.files ?? [])];
                  setFiles((current) => {
                    const known = new Set(current.map(fileKey));
                    return [...current, ...chosen.filter((file) => !known.has(fileKey(file)))].slice(0, FILES_MAX_PER_REQUEST);
                  });
                  // Emptied, so the same file chosen again after a removal fires a change.
                  e.target.value = '';
                }}
              />
            </label>
            <button type="submit" className="btn btn-primary" disabled={busy} data-testid="chat-send">
              {busy ? t('chat.sending') : t('chat.send')}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

export default function ChatThread({ locale, messages, timeZone, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <ChatThreadBody locale={locale} {...props} />
    </IslandRoot>
  );
}
