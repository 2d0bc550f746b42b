// Form state and labelled controls that show the API's field errors next to their field.
import { useState } from "preact/hooks";
import { html } from "./html.js";

/**
 * `values` and their setter, plus `errors`: field name -> messages (the ApiError's `fields`,
 * or local problems such as JSON that does not parse).
 */
export function useForm(initial) {
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState({});
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  return {
    values,
    errors,
    error,
    busy,
    set(name, value) {
      setValues((previous) => ({ ...previous, [name]: value }));
    },
    reset(next) {
      setValues(next);
      setErrors({});
      setError(null);
    },
    /**
     * Runs `action` (an API request): its ApiError's field problems go to their fields, the rest
     * to the form. With `formElement`, a failure moves the focus to the first field in error (or
     * the form's error message), so keyboard and screen reader users land on it.
     */
    async submit(action, localErrors = {}, formElement = null) {
      const focusProblem = () => {
        if (!formElement) return;
        setTimeout(() => (formElement.querySelector('[aria-invalid="true"]') ?? formElement.querySelector(".alert-error"))?.focus(), 0);
      };
      if (Object.keys(localErrors).length > 0) {
        setErrors(localErrors);
        setError(null);
        focusProblem();
        return undefined;
      }
      setBusy(true);
      setErrors({});
      setError(null);
      try {
        return await action();
      } catch (err) {
        setErrors(err.fields ?? {});
        setError(err);
        focusProblem();
        return undefined;
      } finally {
        setBusy(false);
      }
    },
  };
}

function describedBy(id, hint, errors) {
  return [hint ? `${id}-hint` : "", errors?.length ? `${id}-error` : ""].filter(Boolean).join(" ") || undefined;
}

function FieldShell({ id, label, hint, errors, children, inline = false }) {
  return html`
    <div class=${`field${inline ? " field-inline" : ""}${errors?.length ? " has-error" : ""}`}>
      ${inline ? children : null}
      <label for=${id}>${label}</label>
      ${inline ? null : children}
      ${hint ? html`<p class="hint" id=${`${id}-hint`}>${hint}</p>` : null}
      ${errors?.length
        ? html`<p class="field-error" id=${`${id}-error`}>${errors.map((message) => html`<span>${message}</span>`)}</p>`
        : null}
    </div>
  `;
}

/** A text-like input: `type` text, number, url, password, date, datetime-local... */
export function TextField({ form, name, id, label, hint, type = "text", ...rest }) {
  const fieldId = id ?? name;
  const errors = form.errors[name];
  return html`
    <${FieldShell} id=${fieldId} label=${label} hint=${hint} errors=${errors}>
      <input
        id=${fieldId}
        name=${name}
        type=${type}
        value=${form.values[name] ?? ""}
        onInput=${(e) => form.set(name, e.currentTarget.value)}
        aria-invalid=${errors?.length ? "true" : undefined}
        aria-describedby=${describedBy(fieldId, hint, errors)}
        ...${rest}
      />
    <//>
  `;
}

export function TextArea({ form, name, id, label, hint, rows = 3, ...rest }) {
  const fieldId = id ?? name;
  const errors = form.errors[name];
  return html`
    <${FieldShell} id=${fieldId} label=${label} hint=${hint} errors=${errors}>
      <textarea
        id=${fieldId}
        name=${name}
        rows=${rows}
        value=${form.values[name] ?? ""}
        onInput=${(e) => form.set(name, e.currentTarget.value)}
        aria-invalid=${errors?.length ? "true" : undefined}
        aria-describedby=${describedBy(fieldId, hint, errors)}
        ...${rest}
      ></textarea>
    <//>
  `;
}

/** `options`: strings, or `{value, label}`. */
export function SelectField({ form, name, id, label, hint, options, onChange, ...rest }) {
  const fieldId = id ?? name;
  const errors = form.errors[name];
  return html`
    <${FieldShell} id=${fieldId} label=${label} hint=${hint} errors=${errors}>
      <select
        id=${fieldId}
        name=${name}
        value=${form.values[name] ?? ""}
        onChange=${(e) => {
          form.set(name, e.currentTarget.value);
          onChange?.(e.currentTarget.value);
        }}
        aria-invalid=${errors?.length ? "true" : undefined}
        aria-describedby=${describedBy(fieldId, hint, errors)}
        ...${rest}
      >
        ${options.map((option) => {
          const value = typeof option === "string" ? option : option.value;
          const text = typeof option === "string" ? option : option.label;
          return html`<option value=${value}>${text}</option>`;
        })}
      </select>
    <//>
  `;
}

export function CheckboxField({ form, name, id, label, hint, ...rest }) {
  const fieldId = id ?? name;
  const errors = form.errors[name];
  return html`
    <${FieldShell} id=${fieldId} label=${label} hint=${hint} errors=${errors} inline=${true}>
      <input
        id=${fieldId}
        name=${name}
        type="checkbox"
        checked=${Boolean(form.values[name])}
        onChange=${(e) => form.set(name, e.currentTarget.checked)}
        aria-invalid=${errors?.length ? "true" : undefined}
        aria-describedby=${describedBy(fieldId, hint, errors)}
        ...${rest}
      />
    <//>
  `;
}

/** The form's error: its message and code, the problems no field shows, the request id to find it in the logs. */
export function FormError({ error, fields = [], others }) {
  if (!error) return null;
  others ??= error.otherProblems ? error.otherProblems(fields) : [];
  return html`
    <div class="alert alert-error" role="alert" tabindex="-1">
      <p><strong>${error.message}</strong> ${typeof error.code === "string" ? html`<code>${error.code}</code>` : null}</p>
      ${others.length ? html`<ul>${others.map((message) => html`<li>${message}</li>`)}</ul>` : null}
      ${error.requestId ? html`<p class="muted small">Request ${error.requestId}</p>` : null}
    </div>
  `;
}
