import { useState } from 'preact/hooks';

/**
 * Pages of a list the API pages with opaque cursors (`Link: rel="next"`): the URL of each page
 * visited is kept, so Previous goes back without the API knowing of it.
 */
export function useCursorPages() {
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [page, setPage] = useState(0);
  return {
    page,
    /** The URL of the page shown, or null for the first (built from the filters). */
    cursor: cursors[page] ?? null,
    reset() {
      setCursors([null]);
      setPage(0);
    },
    previous: () => setPage(page - 1),
    next(url: string) {
      setCursors((c) => [...c.slice(0, page + 1), url]);
      setPage(page + 1);
    },
  };
}

/** Previous / Next buttons for `useCursorPages`; `next` is the next page's URL, if any. */
export function Pager({ pages, next, noun }: { pages: ReturnType<typeof useCursorPages>; next: string | null | undefined; noun: string }) {
  return (
    <div class="pager">
      <button type="button" class="secondary" disabled={pages.page === 0} onClick={pages.previous}>
        Previous {noun}
      </button>
      <button type="button" class="secondary" disabled={!next} onClick={() => next && pages.next(next)}>
        Next {noun}
      </button>
    </div>
  );
}
