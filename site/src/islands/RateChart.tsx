import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { IChartApi, ISeriesApi, Time, UTCTimestamp } from 'lightweight-charts';
import { CHART_RANGE_NAMES, CHART_RANGES, candlesChange, invertCandles, type TChartRange, type TRateCandle } from '@obmen/shared/rates';
import { displayAxisTime, displayChange, displayDateTime, displayRate } from '@obmen/shared/format';
import type { TLocale } from '@obmen/shared/constants';
import { CALLS } from '@obmen/shared/calls';
import { api } from '../lib/api.ts';
import { trendOf } from '../lib/spark.ts';
import { RATES_EVENT } from '../lib/realtime.ts';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';

/**
 * The pair page's rate chart: the mid rate over a day, a week, a month or a year, read the right
 * way up (1 of the dearer currency in the other), its change, and the range's open, high, low
 * and close as text (what a screen reader gets; the canvas is hidden from it). lightweight-charts
 * loads only when this island hydrates (client:visible), so the exchange form never waits for it.
 * Signed in, a `rates` notice on the socket fetches the newest candles.
 */
type TProps = TIslandProps & {
  src: string;
  dst: string;
  /** Show src per 1 dst (the pair's rate is below 1). */
  inverted: boolean;
};

type TState = { status: 'loading' | 'ready' | 'failed'; range: TChartRange; candles: TRateCandle[] };

const toSeconds = (iso: string) => (Date.parse(iso) / 1000) as UTCTimestamp;
/** A float of the chart's scale as the exact-decimal text the shared formatter takes. */
const decimalText = (value: number) => value.toFixed(value >= 1 ? 4 : 12);

/** The newest candles replace the ones of the same buckets and follow them. */
export function mergeCandles(kept: readonly TRateCandle[], fresh: readonly TRateCandle[]): TRateCandle[] {
  const from = fresh[0]?.time;
  if (from === undefined) return [...kept];
  return [...kept.filter((candle) => candle.time < from), ...fresh];
}

/**
 * A colour token as the page shows it now, for the canvas: the tokens are `light-dark()` pairs
 * (site/src/styles/global.css), which only CSS resolves, so a probe element reads it back.
 */
function cssColor(name: string, fallback: string, alpha = 1): string {
  const probe = document.createElement('span');
  probe.style.color = `var(${name}, ${fallback})`;
  document.body.append(probe);
  const [r, g, b] =
    getComputedStyle(probe)
      .color.match(/[\d.]+/g)
      ?.map(Number) ?? [];
  probe.remove();
  return r === undefined ? fallback : `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

function RateChartBody({ src, dst, inverted, locale, timeZone }: { src: string; dst: string; inverted: boolean; locale: TLocale; timeZone: string }) {
  const { t } = useTranslation();
  const [state, setState] = useState<TState>({ status: 'loading', range: 'day', candles: [] });
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<{ api: IChartApi; series: ISeriesApi<'Area'> } | null>(null);
  const [base, quote] = inverted ? [dst, src] : [src, dst];

  const fetchCandles = useCallback(
    async (range: TChartRange, fromIso?: string) => {
      const { spanMs, interval } = CHART_RANGES[range];
      const to = new Date();
      const from = fromIso ?? new Date(to.getTime() - spanMs).toISOString();
      const answer = await api(CALLS['GET /api/exchange/rates/{src}/{dst}'], { params: { src, dst }, query: { interval, from, to: to.toISOString() } });
      return inverted ? invertCandles(answer.candles) : answer.candles;
    },
    [src, dst, inverted],
  );

  const load = useCallback(
    (range: TChartRange) => {
      setState((before) => ({ ...before, status: 'loading', range }));
      fetchCandles(range).then(
        (candles) => setState((now) => (now.range === range ? { status: 'ready', range, candles } : now)),
        () => setState((now) => (now.range === range ? { ...now, status: 'failed' } : now)),
      );
    },
    [fetchCandles],
  );

  useEffect(() => load('day'), [load]);

  // A rate moved somewhere: this range's newest buckets again (from its last one on).
  useEffect(() => {
    const onRates = () => {
      const { range, candles, status } = state;
      if (status !== 'ready') return;
      const last = candles.at(-1)?.time;
      fetchCandles(range, last).then(
        (fresh) => setState((now) => (now.range === range && now.status === 'ready' ? { ...now, candles: mergeCandles(now.candles, fresh) } : now)),
        () => undefined,
      );
    };
    window.addEventListener(RATES_EVENT, onRates);
    return () => window.removeEventListener(RATES_EVENT, onRates);
  }, [state, fetchCandles]);

  // The chart itself: made once, fed whenever the candles change.
  useEffect(() => {
    let gone = false;
    void import('lightweight-charts').then(({ createChart, AreaSeries, ColorType }) => {
      if (gone || !host.current) return;
      const line = (alpha?: number) => cssColor('--color-primary', '#4d8887', alpha);
      const api = createChart(host.current, {
        autoSize: true,
        layout: {
          background: { type: ColorType.Solid, color: 'transparent' },
          textColor: cssColor('--color-muted', '#5f6b7d'),
          fontFamily: getComputedStyle(document.documentElement).getPropertyValue('--font').trim() || 'system-ui',
          // Its logo is a link inside the canvas a screen reader never reaches: the note below credits it instead.
          attributionLogo: false,
        },
        grid: { vertLines: { visible: false }, horzLines: { color: cssColor('--color-border', '#dde3ea') } },
        rightPriceScale: { borderVisible: false },
        timeScale: {
          borderVisible: false,
          timeVisible: true,
          secondsVisible: false,
          // TickMarkType: 3 and 4 are times within a day, below them days, months and years.
          tickMarkFormatter: (time: Time, type: number) =>
            displayAxisTime(new Date((time as UTCTimestamp) * 1000).toISOString(), locale, timeZone, type >= 3 ? 'time' : 'date'),
        },
        localization: {
          priceFormatter: (value: number) => displayRate(decimalText(value), locale),
          timeFormatter: (time: Time) => displayDateTime(new Date((time as UTCTimestamp) * 1000).toISOString(), locale, timeZone),
        },
        handleScroll: false,
        handleScale: false,
      });
      const series = api.addSeries(AreaSeries, {
        lineColor: line(),
        topColor: line(0.33),
        bottomColor: line(0.02),
        lineWidth: 2,
        priceLineVisible: false,
      });
      chart.current = { api, series };
      host.current.dataset.drawn = 'true';
      setState((now) => ({ ...now }));
    });
    return () => {
      gone = true;
      chart.current?.api.remove();
      chart.current = null;
    };
  }, [locale, timeZone]);

  useEffect(() => {
    const drawn = chart.current;
    if (!drawn || state.status === 'loading') return;
    drawn.series.setData(state.candles.map((candle) => ({ time: toSeconds(candle.time), value: Number(candle.close) })));
    drawn.api.timeScale().fitContent();
  }, [state]);

  const first = state.candles[0];
  const last = state.candles.at(-1);
  const change = candlesChange(state.candles);
  const high = state.candles.reduce<string | null>((top, candle) => (top === null || Number(candle.high) > Number(top) ? candle.high : top), null);
  const low = state.candles.reduce<string | null>((bottom, candle) => (bottom === null || Number(candle.low) < Number(bottom) ? candle.low : bottom), null);
  const changeText = change === null ? null : displayChange(change, locale);
  const direction = trendOf(changeText);
  const rate = (text: string) => `${displayRate(text, locale)}\u00a0${quote}`;

  return (
    <section
      className="rate-chart card"
      aria-labelledby="rate-chart-title"
      aria-busy={state.status === 'loading'}
      data-testid="rate-chart"
      data-range={state.range}
      data-status={state.status}
      data-points={state.candles.length}
      data-last={last?.close ?? ''}
    >
      <header className="rc-head">
        <h2 id="rate-chart-title">{t('chart.title', { base, quote })}</h2>
        {last && (
          <p className="rc-now">
            <strong data-testid="rate-chart-close">{`1\u00a0${base} = ${rate(last.close)}`}</strong>
            {changeText !== null && (
              <span className={`rc-change rc-${direction}`}>
                <span aria-hidden="true">{direction === 'up' ? '▲ ' : direction === 'down' ? '▼ ' : ''}</span>
                <span data-testid="rate-chart-change">{changeText}</span>
              </span>
            )}
          </p>
        )}
      </header>
      <div className="rc-ranges" role="group" aria-label={t('chart.ranges')}>
        {CHART_RANGE_NAMES.map((range) => (
          <button
            key={range}
            type="button"
            className="rc-range"
            aria-pressed={state.range === range}
            data-testid={`rate-chart-range-${range}`}
            onClick={() => load(range)}
          >
            {t(`chart.range_${range}`)}
          </button>
        ))}
      </div>
      <div className="rc-canvas" ref={host} aria-hidden="true" data-testid="rate-chart-canvas" />
      {state.status === 'failed' && (
        <p className="form-error" role="alert">
          {t('chart.failed')}
        </p>
      )}
      {state.status === 'ready' && !first && <p className="muted">{t('chart.empty')}</p>}
      {first && last && high && low && (
        <>
          <h3 className="visually-hidden" id="rate-chart-summary-title">
            {t('chart.summary', { range: t(`chart.range_${state.range}`), base, quote })}
          </h3>
          <dl className="rc-facts" data-testid="rate-chart-summary" aria-labelledby="rate-chart-summary-title">
            {(
              [
                ['chart.open', displayRate(first.open, locale)],
                ['chart.high', displayRate(high, locale)],
                ['chart.low', displayRate(low, locale)],
                ['chart.close', displayRate(last.close, locale)],
                ['chart.change', changeText ?? '—'],
              ] as const
            ).map(([label, value]) => (
              <div key={label}>
                <dt>{t(label)}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </>
      )}
      <p className="rc-note muted">
        {t('chart.note')}{' '}
        <a href="https://www.tradingview.com/" rel="noopener noreferrer">
          {t('chart.attribution')}
        </a>
      </p>
    </section>
  );
}

export default function RateChart({ locale, messages, timeZone = 'UTC', src, dst, inverted }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages} timeZone={timeZone}>
      <RateChartBody src={src} dst={dst} inverted={inverted} locale={locale} timeZone={timeZone} />
    </IslandRoot>
  );
}
