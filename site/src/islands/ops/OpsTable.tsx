import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

export type TOpsColumn<Row> = { title: string; cell: (row: Row) => ReactNode };

/**
 * One titled table of the back office: a heading, and rows that scroll sideways in their own
 * keyboard-reachable region on a narrow screen rather than widen the page. No rows: one line saying so.
 */
export function OpsTable<Row>({
  id,
  title,
  columns,
  rows,
  rowKey,
}: {
  id: string;
  title: string;
  columns: TOpsColumn<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
}) {
  const { t } = useTranslation();
  const titleId = `${id}-title`;
  return (
    <section className="ops-audit" aria-labelledby={titleId} data-testid={id}>
      <h2 id={titleId}>{title}</h2>
      {rows.length === 0 ? (
        <p className="ops-wait">{t('ops.none')}</p>
      ) : (
        <section
          className="ops-table-wrap"
          aria-labelledby={titleId}
          // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (axe scrollable-region-focusable)
          tabIndex={0}
        >
          <table className="ops-table">
            <thead>
              <tr>
                {columns.map((column) => (
                  <th scope="col" key={column.title}>
                    {column.title}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)}>
                  {columns.map((column) => (
                    <td key={column.title}>{column.cell(row)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}
