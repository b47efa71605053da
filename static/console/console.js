// The operator console's one script (docs/console.md): conveniences only, every page works without it.

// A "select all" checkbox ticks every checkbox of its form with the name it names.
for (const all of document.querySelectorAll('input[data-select-all]')) {
  all.addEventListener('change', () => {
    for (const box of all.form.querySelectorAll(`input[type="checkbox"][name="${all.dataset.selectAll}"]`)) box.checked = all.checked;
  });
}

// A copy button copies the value of the field it names, and says so.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy);
    const status = document.querySelector(`[data-copied-for="${button.dataset.copy}"]`);
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      if (status) status.textContent = 'Copied.';
    } catch {
      if (status) status.textContent = 'Select the key and copy it (Ctrl+C).';
    }
  });
}

// An area's "all" box of the permission picker ticks every permission of its fieldset, and shows
// whether they all are.
for (const all of document.querySelectorAll('input[data-select-group]')) {
  const boxes = [...all.closest('fieldset').querySelectorAll('input[type="checkbox"][name]')];
  const sync = () => { all.checked = boxes.length > 0 && boxes.every((box) => box.checked); };
  sync();
  all.addEventListener('change', () => {
    for (const box of boxes) box.checked = all.checked;
  });
  for (const box of boxes) box.addEventListener('change', sync);
}

// The page that hands a sign-in to a SAML identity provider posts its form at once.
for (const form of document.querySelectorAll('form[data-submit-at-once]')) form.submit();
