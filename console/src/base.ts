/** The path prefix the connector is served under behind a proxy (PUBLIC_URL), from the page's meta tag. */
export const basePath = document.querySelector<HTMLMetaElement>('meta[name="connector-base"]')?.content ?? '';

/** A console page's path. */
export const pagePath = (page = ''): string => `${basePath}/console${page ? `/${page}` : ''}`;
