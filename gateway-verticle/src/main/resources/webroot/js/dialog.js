// One modal confirmation dialog (the page's <dialog id="confirm-dialog">), optionally with a text input.

/**
 * Asks the owner to confirm; resolves to the input's value ('' without an input) when confirmed, or null.
 * @param options {title, message, items: [string], input: {label, value}, confirmLabel, danger}
 */
export function confirmDialog({ title, message, items = [], input = null, confirmLabel = 'OK', danger = false }) {
  const dialog = document.getElementById('confirm-dialog');
  const field = document.getElementById('dialog-input');
  const confirm = document.getElementById('dialog-confirm');
  document.getElementById('dialog-title').textContent = title;
  document.getElementById('dialog-body').textContent = message ?? '';
  const list = document.getElementById('dialog-items');
  list.replaceChildren(...items.map((item) => {
    const li = document.createElement('li');
    li.textContent = item;
    return li;
  }));
  list.hidden = items.length === 0;
  document.getElementById('dialog-input-row').hidden = !input;
  document.getElementById('dialog-input-label').textContent = input?.label ?? '';
  field.value = input?.value ?? '';
  field.required = Boolean(input);
  confirm.textContent = confirmLabel;
  confirm.className = danger ? 'danger' : 'primary';
  dialog.returnValue = '';
  return new Promise((resolve) => {
    const cancel = document.getElementById('dialog-cancel');
    const onCancel = () => dialog.close('cancel');
    cancel.addEventListener('click', onCancel);
    dialog.addEventListener('close', () => {
      cancel.removeEventListener('click', onCancel);
      resolve(dialog.returnValue === 'confirm' ? (input ? field.value.trim() : '') : null);
    }, { once: true });
    dialog.showModal();
    (input ? field : confirm).focus();
  });
}
