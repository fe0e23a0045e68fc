/** A secret the API shows only in this answer: the page keeps it nowhere else. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{label}</strong> (shown this once: copy it now)
      </p>
      <code data-testid="shown-once">{value}</code>
    </div>
  );
}
