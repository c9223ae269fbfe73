import type { TNotification } from '@obmen/shared';
import { $notifications } from '../stores/notifications.ts';
import { $user } from '../stores/user.ts';
import { clientMessage } from '../lib/client-i18n.ts';
import { isSafeRedirect } from '@obmen/shared/routes';

const ANONYMOUS_CLOSED_KEY = 'obmen.closed_notifications';

function closedAnonymously(): number[] {
  try {
    return JSON.parse(localStorage.getItem(ANONYMOUS_CLOSED_KEY) ?? '[]') as number[];
  } catch {
    return [];
  }
}

async function close(notification: TNotification): Promise<void> {
  if ($user.get()?.is_authenticated) {
    // Spec §4: the server is told first, then it disappears.
    const { api, CALLS } = await import('../lib/api.ts');
    await api(CALLS['POST /api/notify/close'], { body: { id: notification.notification_id } });
  } else {
    localStorage.setItem(ANONYMOUS_CLOSED_KEY, JSON.stringify([...closedAnonymously(), notification.notification_id]));
  }
  $notifications.set($notifications.get().filter((item) => item.notification_id !== notification.notification_id));
}

function buttonLinks(notification: TNotification): HTMLElement {
  const row = document.createElement('div');
  row.className = 'notice-buttons';
  for (const button of notification.buttons) {
    if (!isSafeRedirect(button.url) && !button.url.startsWith('https://')) continue;
    const link = document.createElement('a');
    link.className = 'btn btn-outline';
    link.href = button.url;
    link.textContent = button.title;
    row.append(link);
  }
  return row;
}

function render(notification: TNotification): HTMLElement {
  const element = document.createElement(notification.display === 'modal' ? 'dialog' : 'section');
  element.className = `notice notice-${notification.display} notice-${notification.type}`;
  element.dataset.testid = `notification-${notification.display}`;
  element.dataset.notificationId = String(notification.notification_id);
  const title = document.createElement('h2');
  title.className = 'notice-title';
  title.textContent = notification.title;
  // The text is HTML sanitised by the core on save and on the way out; the page's CSP blocks
  // inline scripts and handlers on top of that.
  const body = document.createElement('div');
  body.className = 'notice-text';
  body.innerHTML = notification.text;
  element.append(title, body, buttonLinks(notification));
  if (notification.closable) {
    const closeButton = document.createElement('button');
    closeButton.type = 'button';
    closeButton.className = 'notice-close';
    closeButton.dataset.testid = 'notification-close';
    closeButton.setAttribute('aria-label', clientMessage('toast.close'));
    closeButton.textContent = '×';
    closeButton.addEventListener('click', () => {
      closeButton.disabled = true;
      close(notification)
        .then(() => {
          // The button is gone with its notice: focus goes to the content, not the page body.
          if (!document.activeElement || document.activeElement === document.body) document.getElementById('main')?.focus();
        })
        .catch(() => (closeButton.disabled = false));
    });
    element.append(closeButton);
  }
  if (element instanceof HTMLDialogElement) {
    element.setAttribute('aria-labelledby', (title.id = `notice-title-${notification.notification_id}`));
    // Escape closes a closable one for good, as its × does; any other only for this page view.
    element.addEventListener('cancel', (event) => {
      if (!notification.closable) return;
      event.preventDefault();
      element.querySelector<HTMLButtonElement>('.notice-close')?.click();
    });
    element.addEventListener('close', () => {
      if (!document.activeElement || document.activeElement === document.body) document.getElementById('main')?.focus();
    });
  }
  return element;
}

/** Spec §4: inner ones are banners, modal ones open a dialog by themselves. */
export function initNotifications(): void {
  const host = document.getElementById('notifications');
  if (!host) return;
  $notifications.subscribe((notifications) => {
    const hidden = $user.get()?.is_authenticated ? [] : closedAnonymously();
    const visible = notifications.filter((item) => !hidden.includes(item.notification_id));
    host.replaceChildren(...visible.map(render));
    for (const dialog of host.querySelectorAll('dialog')) (dialog as HTMLDialogElement).showModal();
  });
}
