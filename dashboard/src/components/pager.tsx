/** Newer/older buttons over an offset-paged list, newest first; `shown` is how many rows this page holds. */
export function Pager(props: { offset: number; pageSize: number; shown: number; hasMore: boolean; onOffset: (offset: number) => void }) {
  const { offset, pageSize } = props;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={offset === 0} onClick={() => props.onOffset(Math.max(0, offset - pageSize))}>
        Newer
      </button>
      <span>
        {offset + 1}–{offset + props.shown}
      </span>
      <button type="button" disabled={!props.hasMore} onClick={() => props.onOffset(offset + pageSize)}>
        Older
      </button>
    </nav>
  );
}
