import { useEffect, useState } from 'react';

/** Hash routes (#/sessions/ID), so the service serves one index.html and needs no fallback route. */
const read = (): string[] =>
  location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => decodeURIComponent(part));

export const useRoute = (): string[] => {
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const onChange = () => setParts(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return parts;
};

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;
