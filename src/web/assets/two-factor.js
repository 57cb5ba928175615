// Security keys and passkeys (WebAuthn): a form with data-webauthn="register" or "authenticate"
// carries the ceremony's options as JSON (data-options, made by the server, whose challenge it
// keeps) and the URL of @simplewebauthn/browser (data-library, one of the site's own assets). On
// submit the browser asks the authenticator, puts its answer in the hidden field `response` as
// JSON and submits the form; the server verifies it. Without JavaScript the server refuses the
// empty answer with a message.
for (const form of document.querySelectorAll('form[data-webauthn]')) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    const status = form.querySelector('[role="status"]');
    status.textContent = 'Waiting for the security key…';
    try {
      await import(form.dataset.library);
      const { startRegistration, startAuthentication } = globalThis.SimpleWebAuthnBrowser;
      const optionsJSON = JSON.parse(form.dataset.options);
      const answer = form.dataset.webauthn === 'register' ? await startRegistration({ optionsJSON }) : await startAuthentication({ optionsJSON });
      form.querySelector('input[name="response"]').value = JSON.stringify(answer);
      form.submit();
    } catch (error) {
      status.textContent = `The security key did not answer: ${error.message}`;
    }
  });
}
