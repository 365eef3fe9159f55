import type { CombinedError } from 'urql';
import { useEffect, useId, useRef, useState } from 'react';
import type { ReactNode } from 'react';

interface Detail {
  path?: string;
  message?: string;
}

/** The API's error as a person reads it: each message, its code, and the fields it names. */
export const ErrorBox = ({ error }: { error: CombinedError | Error | string | null | undefined }) => {
  if (!error) return null;
  if (typeof error === 'string' || !('graphQLErrors' in error)) {
    return (
      <div role="alert" className="error">
        {typeof error === 'string' ? error : error.message}
      </div>
    );
  }
  return (
    <div role="alert" className="error">
      {error.networkError ? <p>Network: {error.networkError.message}</p> : null}
      {error.graphQLErrors.map((e, i) => {
        const details = (e.extensions?.details as Detail[] | undefined) ?? [];
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: errors have no identity of their own
          <div key={i}>
            <p>
              {e.message}
              {e.extensions?.code ? <span className="code"> ({String(e.extensions.code)})</span> : null}
            </p>
            {details.length > 0 ? (
              <ul>
                {details.map((d, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: details have no identity of their own
                  <li key={j}>
                    <strong>{d.path}</strong>: {d.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </div>
        );
      })}
    </div>
  );
};

export const Field = ({
  label,
  value,
  onChange,
  type = 'text',
  placeholder,
  required,
  name,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  type?: string;
  placeholder?: string;
  required?: boolean;
  name?: string;
}) => {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={value}
        placeholder={placeholder}
        required={required}
        onChange={(e) => onChange(e.currentTarget.value)}
      />
    </div>
  );
};

export const Select = ({
  label,
  value,
  onChange,
  options,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  options: Array<[string, string]>;
}) => {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
};

export const Section = ({ title, children }: { title: string; children: ReactNode }) => (
  <section className="card" aria-label={title}>
    <h2>{title}</h2>
    {children}
  </section>
);

export const StatusBadge = ({ status }: { status: string }) => (
  <span className={`badge badge-${status.toLowerCase()}`} data-status={status}>
    {status.replace('_', ' ')}
  </span>
);

/** A button that asks before doing something that cannot be undone. */
export const ConfirmButton = ({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => void }) => {
  const [asking, setAsking] = useState(false);
  const cancel = useRef<HTMLButtonElement>(null);
  // Keyboard users land on the safe choice when the question appears.
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!asking) {
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <fieldset className="confirm">
      <legend>{question}</legend>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" ref={cancel} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </fieldset>
  );
};

export const formatTime = (value: string | null | undefined): string => (value ? new Date(value).toLocaleString() : '—');

/** A wide table that scrolls sideways on a narrow screen; focusable, so the keyboard can scroll it too. */
export const TableWrap = ({ label, children }: { label: string; children: ReactNode }) => (
  // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1)
  <section className="table-wrap" aria-label={label} tabIndex={0}>
    {children}
  </section>
);
