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
