import type { ComponentChildren } from 'preact';

/** A column heading; `{ hidden }` names an action column for screen readers without showing a label. */
export type ColumnHeading = string | { hidden: string };

/** A table that scrolls sideways on narrow screens, with one header row; the rows are the children. */
export function DataTable(props: { columns: readonly ColumnHeading[]; class?: string; caption?: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll">
      <table class={props.class}>
        {props.caption !== undefined && <caption>{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((column, index) =>
              typeof column === 'string' ? (
                <th scope="col" key={index}>
                  {column}
                </th>
              ) : (
                <th scope="col" key={index}>
                  <span class="visually-hidden">{column.hidden}</span>
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
