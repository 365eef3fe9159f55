import { useEffect, useState } from 'react';
import { storedKey } from './client.ts';

/** A received file as the API shows it (an incoming item's or a stored message's `media`). */
export interface Media {
  url: string;
  mimetype: string;
  fileName?: string | null;
  size: number;
}

const sizeText = (bytes: number): string => (bytes < 1024 ? `${bytes} B` : `${Math.round(bytes / 1024)} KB`);

/**
 * A received file as the file itself: its URL needs the API key, which a link cannot send, so the page
 * fetches it with the key and shows it (a picture for an image) with a link to the copy it holds.
 */
export const ReceivedMedia = ({ media, type, from }: { media: Media; type: string; from: string }) => {
  const [local, setLocal] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    let cancelled = false;
    fetch(media.url, { headers: { 'x-api-key': storedKey() ?? '' } })
      .then(async (res) => {
        if (!res.ok) throw new Error(`the file answered ${res.status}`);
        const blob = await res.blob();
        if (cancelled) return;
        url = URL.createObjectURL(blob);
        setLocal(url);
      })
      .catch((err: unknown) => {
        if (!cancelled) setFailed(err instanceof Error ? err.message : String(err));
      });
    return () => {
      cancelled = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [media.url]);
  const name = media.fileName ?? `${type}.${media.mimetype.split('/')[1]?.split(';')[0] ?? 'bin'}`;
  return (
    <div className="media">
      {local && media.mimetype.startsWith('image/') ? <img src={local} alt={`${type} from ${from}`} /> : null}
      {local ? (
        <a href={local} download={name}>
          {type === 'image' ? 'Image' : type.charAt(0).toUpperCase() + type.slice(1)}: {name} ({sizeText(media.size)})
        </a>
      ) : (
        <span className="muted">
          {type}: {name} ({sizeText(media.size)}){failed ? `, not loaded: ${failed}` : ', loading…'}
        </span>
      )}
    </div>
  );
};
