const KEY = 'obmen.tutorial';

type TFlags = Record<string, { show: boolean }>;

function readFlags(): TFlags {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? '{}') as TFlags;
  } catch {
    return {};
  }
}

export function initTutorial(): void {
  const root = document.querySelector<HTMLElement>('[data-tutorial]');
  if (!root) return;
  const hints = [...root.querySelectorAll<HTMLElement>('[data-step]')];
  const reset = root.querySelector<HTMLButtonElement>('[data-tutorial-reset]');
  const apply = () => {
    const flags = readFlags();
    for (const hint of hints) hint.hidden = flags[hint.dataset.step ?? '']?.show === false;
    if (reset) reset.hidden = !hints.some((hint) => hint.hidden);
  };
  root.addEventListener('click', (event) => {
    const button = (event.target as Element).closest('[data-tutorial-hide]');
    const step = button?.closest<HTMLElement>('[data-step]')?.dataset.step;
    if (!step) return;
    localStorage.setItem(KEY, JSON.stringify({ ...readFlags(), [step]: { show: false } }));
    apply();
  });
  reset?.addEventListener('click', () => {
    localStorage.removeItem(KEY);
    apply();
  });
  apply();
}
