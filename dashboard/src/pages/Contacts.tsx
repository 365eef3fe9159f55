import Papa from 'papaparse';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import {
  AddContactGroupMembers,
  ContactGroupMembersQuery,
  ContactGroupsQuery,
  ContactsQuery,
  CreateContactGroup,
  DeleteContactGroup,
  ImportContacts,
  RemoveContactGroupMember,
  UpsertContact,
} from '../api.ts';
import { PAGE_SIZES } from '../page-sizes.ts';
import type { ContactInput, ImportContactsMutation } from '../generated/graphql.ts';
import { ConfirmButton, ErrorBox, Field, Section, TableWrap } from '../ui.tsx';

// An empty list names no type, so urql is told which mutations make it stale.
const GROUP_LIST = { additionalTypenames: ['ContactGroup'] };
const CONTACT_LIST = { additionalTypenames: ['Contact'] };
const KNOWN = new Set(['jid', 'phone', 'name', 'email', 'tags']);

/** A CSV row as the bulk import takes it: known columns by name, tags split on ; or |, the rest as variables. */
export const rowToContact = (row: Record<string, string>): ContactInput => {
  const contact: ContactInput = {};
  const variables: Record<string, string> = {};
  for (const [column, raw] of Object.entries(row)) {
    const key = column.trim().toLowerCase();
    const value = (raw ?? '').trim();
    if (value === '') continue;
    if (key === 'tags')
      contact.tags = value
        .split(/[;|]/)
        .map((t) => t.trim())
        .filter(Boolean);
    else if (KNOWN.has(key)) contact[key as 'jid' | 'phone' | 'name' | 'email'] = value;
    else variables[column.trim()] = value;
  }
  if (Object.keys(variables).length > 0) contact.variables = variables;
  return contact;
};

/** One contact by hand: created, or merged into the contact with that number (as POST /contacts does). */
const AddContact = () => {
  const [phone, setPhone] = useState('');
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [tags, setTags] = useState('');
  const [saved, save] = useMutation(UpsertContact);
  return (
    <Section title="Add a contact">
      <form
        className="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const list = tags
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean);
          const input = {
            phone: phone.trim(),
            ...(name.trim() ? { name: name.trim() } : {}),
            ...(email.trim() ? { email: email.trim() } : {}),
            ...(list.length > 0 ? { tags: list } : {}),
          };
          const r = await save({ input }, CONTACT_LIST);
          if (r.data) {
            setPhone('');
            setName('');
            setEmail('');
            setTags('');
          }
        }}
      >
        <Field label="Phone number" name="phone" value={phone} onChange={setPhone} placeholder="15551234567" required />
        <Field label="Name" name="name" value={name} onChange={setName} />
        <Field label="Email" name="email" type="email" value={email} onChange={setEmail} />
        <Field label="Tags (comma-separated)" value={tags} onChange={setTags} />
        <button type="submit" className="primary">
          Save contact
        </button>
      </form>
      {saved.data ? (
        <p role="status">
          Saved {saved.data.upsertContact.name || saved.data.upsertContact.jid} ({saved.data.upsertContact.jid})
        </p>
      ) : null}
      <ErrorBox error={saved.error} />
    </Section>
  );
};

const CsvImport = () => {
  const [state, run] = useMutation(ImportContacts);
  const [parseError, setParseError] = useState<string | null>(null);
  const [result, setResult] = useState<ImportContactsMutation['importContacts'] | null>(null);
  return (
    <Section title="Import contacts from CSV">
      <p>
        A header row with any of <code>phone</code>, <code>jid</code>, <code>name</code>, <code>email</code>, <code>tags</code> (separated
        by ;); other columns become variables.
      </p>
      <div className="field">
        <label htmlFor="csv-file">CSV file</label>
        <input
          id="csv-file"
          type="file"
          accept=".csv,text/csv"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (!file) return;
            setParseError(null);
            setResult(null);
            Papa.parse<Record<string, string>>(file, {
              header: true,
              skipEmptyLines: true,
              complete: async (parsed) => {
                if (parsed.errors.length > 0) {
                  setParseError(parsed.errors.map((err) => `row ${err.row ?? '?'}: ${err.message}`).join('; '));
                  return;
                }
                const r = await run({ contacts: parsed.data.map(rowToContact) }, { additionalTypenames: ['Contact'] });
                if (r.data) setResult(r.data.importContacts);
              },
            });
          }}
        />
      </div>
      <ErrorBox error={parseError ?? state.error} />
      {result ? (
        <div role="status" className="import-result">
          <p>
            Created <strong data-testid="import-created">{result.created}</strong>, updated{' '}
            <strong data-testid="import-updated">{result.updated}</strong>, skipped{' '}
            <strong data-testid="import-skipped">{result.skipped}</strong>, errors{' '}
            <strong data-testid="import-errors">{result.errors.length}</strong>
          </p>
          {result.errors.length > 0 ? (
            <ul>
              {result.errors.map((err) => (
                <li key={err.index}>
                  Row {err.index + 1}
                  {err.jid ? ` (${err.jid})` : ''}: {err.reason}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </Section>
  );
};

// Group mutations change counts and member lists that no mutation result carries, so both queries are refetched.
const GROUP_CHANGE = { additionalTypenames: ['ContactGroup'] };

/** One group's members (the first 50), each with a button that takes it out of the group. */
const Members = ({ groupId, name }: { groupId: string; name: string }) => {
  const [members] = useQuery({ query: ContactGroupMembersQuery, variables: { id: groupId }, context: GROUP_LIST });
  const [removed, remove] = useMutation(RemoveContactGroupMember);
  const connection = members.data?.contactGroup.members;
  return (
    <div className="members">
      <ErrorBox error={members.error ?? removed.error} />
      {connection && connection.edges.length === 0 ? <p>No members yet.</p> : null}
      <ul aria-label={`Members of ${name}`}>
        {connection?.edges.map(({ node: m }) => (
          <li key={m.id}>
            {m.name || m.jid} <span className="muted">{m.jid}</span>{' '}
            <button
              type="button"
              onClick={() => void remove({ groupId, jid: m.jid }, GROUP_CHANGE)}
              aria-label={`Remove ${m.name || m.jid} from ${name}`}
            >
              Remove
            </button>
          </li>
        ))}
        {connection && connection.totalCount > connection.edges.length ? (
          <li>and {connection.totalCount - connection.edges.length} more</li>
        ) : null}
      </ul>
    </div>
  );
};

const Groups = () => {
  const [groups] = useQuery({ query: ContactGroupsQuery, context: GROUP_LIST });
  const [name, setName] = useState('');
  const [created, create] = useMutation(CreateContactGroup);
  const [groupId, setGroupId] = useState('');
  const [jids, setJids] = useState('');
  const [added, add] = useMutation(AddContactGroupMembers);
  const [deleted, remove] = useMutation(DeleteContactGroup);
  const [open, setOpen] = useState<string | null>(null);
  const list = groups.data?.contactGroups;
  return (
    <Section title="Contact groups">
      {list && list.edges.length === 0 ? <p>No groups yet.</p> : null}
      <ul className="plain groups" aria-label="Groups">
        {list?.edges.map(({ node: g }) => (
          <li key={g.id} data-group={g.name}>
            <strong>{g.name}</strong> — <span data-testid="member-count">{g.contactCount}</span> members{' '}
            {g.description ? `· ${g.description} ` : ''}
            <button type="button" aria-expanded={open === g.id} onClick={() => setOpen(open === g.id ? null : g.id)}>
              {open === g.id ? 'Hide members' : 'Show members'}
            </button>
            <ConfirmButton
              label="Delete group"
              question={`Delete the group ${g.name}? Its contacts stay in the address book.`}
              onConfirm={() => void remove({ id: g.id }, GROUP_CHANGE)}
            />
            {open === g.id ? <Members groupId={g.id} name={g.name} /> : null}
          </li>
        ))}
        {list && list.totalCount > list.edges.length ? <li>and {list.totalCount - list.edges.length} more groups</li> : null}
      </ul>
      <form
        className="inline"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await create({ name: name.trim() }, GROUP_CHANGE);
          if (!r.error) setName('');
        }}
      >
        <Field label="New group name" value={name} onChange={setName} required />
        <button type="submit">Create group</button>
      </form>
      <ErrorBox error={created.error ?? deleted.error ?? groups.error} />
      <form
        className="inline"
        onSubmit={(e) => {
          e.preventDefault();
          const list = jids
            .split(/[\s,]+/)
            .map((j) => j.trim())
            .filter(Boolean);
          void add({ groupId, jids: list }, GROUP_CHANGE);
        }}
      >
        <div className="field">
          <label htmlFor="member-group">Group</label>
          <select id="member-group" value={groupId} onChange={(e) => setGroupId(e.currentTarget.value)} required>
            <option value="">Choose…</option>
            {list?.edges.map(({ node: g }) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
        </div>
        <Field label="Contact JIDs (comma-separated)" value={jids} onChange={setJids} required />
        <button type="submit">Add members</button>
      </form>
      {added.data ? (
        <p role="status">
          Added {added.data.addContactGroupMembers.added}
          {added.data.addContactGroupMembers.errors.map((err) => ` · ${err.jid}: ${err.reason}`).join('')}
        </p>
      ) : null}
      <ErrorBox error={added.error} />
    </Section>
  );
};

export const ContactsPage = () => {
  const [search, setSearch] = useState('');
  const [tag, setTag] = useState('');
  // Cursors of the pages seen so far: page n starts after cursors[n - 1] (page 1 after nothing).
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPageNumber] = useState(1);
  const setPage = (n: number) => {
    if (n === 1) setCursors([]);
    setPageNumber(n);
  };
  const [contacts] = useQuery({
    query: ContactsQuery,
    context: CONTACT_LIST,
    variables: {
      first: PAGE_SIZES.contacts,
      ...(page > 1 ? { after: cursors[page - 2] } : {}),
      ...(search.trim() ? { search: search.trim() } : {}),
      ...(tag.trim() ? { tag: tag.trim() } : {}),
    },
  });
  const data = contacts.data?.contacts;
  const pages = data ? Math.max(1, Math.ceil(data.totalCount / PAGE_SIZES.contacts)) : 1;
  return (
    <>
      <h1>Contacts</h1>
      <Section title="Address book">
        <div className="inline">
          <Field
            label="Search"
            type="search"
            value={search}
            onChange={(v) => {
              setSearch(v);
              setPage(1);
            }}
          />
          <Field
            label="Tag"
            value={tag}
            onChange={(v) => {
              setTag(v);
              setPage(1);
            }}
          />
        </div>
        <ErrorBox error={contacts.error} />
        <TableWrap label="Contacts table">
          <table>
            <caption className="sr-only">Contacts</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phone</th>
                <th scope="col">Email</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {data?.edges.map(({ node: c }) => (
                <tr key={c.id} data-jid={c.jid}>
                  <td>{c.name}</td>
                  <td>{c.phone}</td>
                  <td>{c.email}</td>
                  <td>
                    {c.tags.map((t) => (
                      <button type="button" className="tag" key={t} onClick={() => setTag(t)} aria-label={`Filter by tag ${t}`}>
                        {t}
                      </button>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
        <nav className="pager" aria-label="Contact pages">
          <button type="button" disabled={page <= 1} onClick={() => setPageNumber(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {pages} · {data?.totalCount ?? 0} contacts
          </span>
          <button
            type="button"
            disabled={!data?.pageInfo.hasNextPage}
            onClick={() => {
              const end = data?.pageInfo.endCursor;
              if (!end) return;
              setCursors([...cursors.slice(0, page - 1), end]);
              setPageNumber(page + 1);
            }}
          >
            Next
          </button>
        </nav>
      </Section>
      <AddContact />
      <CsvImport />
      <Groups />
    </>
  );
};
