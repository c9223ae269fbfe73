import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import PDFDocument from 'pdfkit';
import { DEFAULT_TIME_ZONE, displayAmount, displayDateTime, formatAmount, translate, type TI18nKey } from '@obmen/shared';
import type { TStatement, TStatementSection } from './statement.ts';

/*
 * A statement as an A4 PDF: the exchange's details, the holder, the period, then per currency
 * the opening and closing balances, the period's credits and debits, and a table of movements
 * with their running balance. DejaVu Sans (npm, embedded and subset by pdfkit) has Cyrillic.
 * Dates are UTC days and times, as the statement's period is.
 */

const fontDir = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const FONT = join(fontDir, 'DejaVuSans.ttf');
const BOLD = join(fontDir, 'DejaVuSans-Bold.ttf');

const MARGIN = 40;
// Date, kind, counterparty, amount, fee, balance: widths in points of an A4 page's 515.
const COLUMNS = [92, 78, 95, 90, 60, 100] as const;
const RIGHT = [false, false, false, true, true, true] as const;

type TDoc = InstanceType<typeof PDFDocument>;

/** The statement's PDF, as a stream to send (it ends itself). */
export function renderStatementPdf(statement: TStatement, issuer: { url: string; generatedAt: Date }): TDoc {
  const { locale } = statement;
  const t = (key: TI18nKey, vars?: Record<string, string | number>) => translate(locale, key, vars);
  // The heading says the days are UTC's; each date needs no suffix.
  const day = (date: Date) => displayDateTime(date.toISOString(), locale, DEFAULT_TIME_ZONE, 'date').replace(/ UTC$/, '');
  const lastDay = new Date(statement.to.getTime() - 1);
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    info: { Title: t('statement.title'), Author: 'Obmen', Subject: `${statement.accountId} ${day(statement.from)} – ${day(lastDay)}` },
    lang: locale,
  });
  doc.registerFont('body', FONT);
  doc.registerFont('bold', BOLD);
  const width = doc.page.width - 2 * MARGIN;

  doc.font('bold').fontSize(18).text('Obmen');
  doc
    .font('body')
    .fontSize(9)
    .fillColor('#4c566a')
    .text(t('statement.issuer', { url: issuer.url }));
  doc.moveDown(0.8).fillColor('#2e3440').font('bold').fontSize(14).text(t('statement.title'));
  doc.font('body').fontSize(10);
  doc.text(t('statement.period', { from: day(statement.from), to: day(lastDay) }));
  doc.text(t('statement.account', { account: statement.accountId }));
  doc.text(statement.name ? t('statement.holder', { name: statement.name }) : t('statement.holder_unverified'));
  doc.text(t('statement.generated', { at: displayDateTime(issuer.generatedAt.toISOString(), locale, DEFAULT_TIME_ZONE) }));
  doc.moveDown();

  if (!statement.sections.length) doc.text(t('statement.empty'));
  for (const section of statement.sections) drawSection(doc, section, { t, locale, width });
  doc.end();
  return doc;
}

type TDrawing = { t: (key: TI18nKey, vars?: Record<string, string | number>) => string; locale: TStatement['locale']; width: number };

function drawSection(doc: TDoc, section: TStatementSection, { t, locale, width }: TDrawing) {
  const money = (minor: bigint, signed = false) => {
    const text = displayAmount(formatAmount(minor < 0n ? -minor : minor, section.currency.precision), locale);
    return signed ? `${minor < 0n ? '−' : '+'}${text}` : minor < 0n ? `−${text}` : text;
  };
  ensureRoom(doc, 120);
  doc
    .moveDown(0.5)
    .font('bold')
    .fontSize(12)
    .text(`${section.currency.code} · ${section.currency.names[locale] ?? section.currency.name}`);
  doc.font('body').fontSize(9);
  doc.text(
    [
      t('statement.opening', { amount: money(section.opening) }),
      t('statement.credits', { amount: money(section.credits) }),
      t('statement.debits', { amount: money(section.debits) }),
      t('statement.closing', { amount: money(section.closing) }),
    ].join('   '),
    { width },
  );
  doc.moveDown(0.4);
  const header = [
    t('statement.col_date'),
    t('statement.col_kind'),
    t('statement.col_counterparty'),
    t('statement.col_amount'),
    t('statement.col_fee'),
    t('statement.col_balance'),
  ];
  const drawHeader = () => row(doc, header, true);
  drawHeader();
  if (!section.lines.length) row(doc, [t('statement.no_movements'), '', '', '', '', money(section.closing)], false);
  for (const line of section.lines) {
    if (ensureRoom(doc, 16)) drawHeader();
    row(
      doc,
      [
        displayDateTime(line.at.toISOString(), locale, DEFAULT_TIME_ZONE).replace(/ UTC$/, ''),
        t(`statement.kind.${line.kind}` as TI18nKey),
        line.counterparty ?? '—',
        money(line.amount, true),
        line.fee ? money(line.fee) : '—',
        money(line.balance),
      ],
      false,
    );
  }
  doc.moveDown();
}

/** A new page when fewer than `points` are left; answers whether it made one. */
function ensureRoom(doc: TDoc, points: number): boolean {
  if (doc.y + points <= doc.page.height - MARGIN) return false;
  doc.addPage();
  return true;
}

function row(doc: TDoc, cells: string[], header: boolean) {
  const top = doc.y;
  let x = MARGIN;
  doc.font(header ? 'bold' : 'body').fontSize(8);
  let bottom = top;
  cells.forEach((cell, i) => {
    const cellWidth = COLUMNS[i]! - 4;
    doc.text(cell, x, top, { width: cellWidth, align: RIGHT[i] ? 'right' : 'left' });
    bottom = Math.max(bottom, doc.y);
    x += COLUMNS[i]!;
  });
  doc
    .moveTo(MARGIN, bottom + 2)
    .lineTo(MARGIN + COLUMNS.reduce((a, b) => a + b, 0), bottom + 2)
    .lineWidth(header ? 0.8 : 0.3)
    .strokeColor('#d8dee9')
    .stroke();
  doc.x = MARGIN;
  doc.y = bottom + 5;
}
