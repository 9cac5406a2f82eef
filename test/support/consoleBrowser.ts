/**
 * One browser's cookie jar over fetch, for the console's HTTP tests: follows no redirect, keeps
 * the cookies it is sent, posts forms urlencoded. `ip`: the client address to present (the app
 * trusts its loopback proxy's X-Forwarded-For).
 */
export function consoleBrowser(base: string, ip = '') {
  const jar = new Map<string, string>();
  async function go(method: string, path: string, form?: Record<string, string>) {
    const res = await fetch(base + path, {
      method,
      redirect: 'manual',
      headers: {
        ...(ip ? { 'X-Forwarded-For': ip } : {}),
        Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair = ''] = c.split(';');
      const i = pair.indexOf('=');
      const value = pair.slice(i + 1);
      if (value) jar.set(pair.slice(0, i), value);
      else jar.delete(pair.slice(0, i));
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers, setCookies };
  }
  const csrfIn = (html: string) => /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  async function signIn(email: string, password: string, otp?: string) {
    const form = await go('GET', '/console/sign-in');
    return go('POST', '/console/sign-in', { csrf_token: csrfIn(form.text), email, password, ...(otp ? { otp_attempt: otp } : {}) });
  }
  return { go, jar, csrfIn, signIn };
}
