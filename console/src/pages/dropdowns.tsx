import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorMessage, Loading } from '../components/status';
import { OptionSourcePreview, type OptionSource } from '../components/option-source';
import { useApi } from '../use-api';

interface Manifest {
  optionSources: OptionSource[];
}

/**
 * Every option source the manifest declares (`GET /v1/manifest`), previewed the way a platform
 * shows it. A source whose path takes a parameter filled from another source (the groups of a
 * menu) follows the value chosen in that one.
 */
export function DropdownsPage() {
  const manifest = useApi(() => api<Manifest>('/v1/manifest').then((a) => a.data), []);
  const [chosen, setChosen] = useState<Record<string, string>>({});
  return (
    <>
      <h1>Dropdowns</h1>
      <p>
        Each dropdown as Zapier, Make, n8n and the others show it: type to search (<code>q</code>), load the next page (<code>limit</code> and the{' '}
        <code>Link</code> header's cursor), and see the <code>[label, value]</code> answer the connector gave.
      </p>
      <ErrorMessage error={manifest.error} />
      {manifest.loading && !manifest.data && <Loading what="the manifest" />}
      {manifest.data?.optionSources.map((source) => (
        <OptionSourcePreview
          key={source.id}
          source={source}
          params={Object.fromEntries((source.params ?? []).map((p) => [p.name, p.optionsFrom ? chosen[p.optionsFrom] : undefined]))}
          paramTitles={Object.fromEntries((source.params ?? []).map((p) => [p.name, p.title]))}
          onChoose={(value) => setChosen((c) => ({ ...c, [source.id]: value }))}
        />
      ))}
    </>
  );
}
