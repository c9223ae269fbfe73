import { invertRate } from '@obmen/shared/format';
import { changeFraction, type TRateSummary } from '@obmen/shared/rates';

/** A pair's last day as the list shows it: read the same way up as its rate, and its change. */
export type TTrend = { points: string[]; change: string | null };

/** The summary read from the pair's other side when its rate is shown inverted (src per 1 dst). */
export function uprightTrend(summary: TRateSummary, inverted: boolean): TTrend {
  if (!inverted) return { points: summary.points, change: summary.change };
  const points = summary.points.map(invertRate);
  const last = points.at(-1);
  return { points, change: summary.open !== null && last ? changeFraction(invertRate(summary.open), last) : null };
}

/** Which way a change as shown went: up, down, or none (a change that rounds to 0 %). */
export function trendOf(changeText: string | null): 'up' | 'down' | 'flat' {
  return changeText?.startsWith('+') ? 'up' : changeText?.startsWith('\u2212') ? 'down' : 'flat';
}

/**
 * The spark line's `points` attribute: the closes scaled into width × height (floats are fine
 * for a drawing), the highest at the top; a flat day is a line across the middle. Null below
 * two points.
 */
export function sparkPoints(points: readonly string[], width: number, height: number): string | null {
  if (points.length < 2) return null;
  const values = points.map(Number);
  const top = Math.max(...values);
  const bottom = Math.min(...values);
  const span = top - bottom;
  const pad = 2;
  return values
    .map((value, i) => {
      const x = (i / (values.length - 1)) * width;
      const y = span === 0 ? height / 2 : pad + ((top - value) / span) * (height - 2 * pad);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}
