import qrcode from 'qrcode-generator';
import { escapeHtml } from '../shared/escape-html.js';
import { type Html, trustedMarkup } from './html.js';

/** The light border every reader needs around the code, in modules (ISO/IEC 18004 asks for four). */
const QUIET_ZONE = 4;

/**
 * `text` as a QR code drawn in inline SVG (docs/console.md#second-factor): one path of dark modules on a
 * white square, so it scans in any theme, needs no image request and no script, and passes the
 * console's CSP. Error correction M (15%), the size chosen by qrcode-generator for the text's length.
 */
export function qrCodeSvg(text: string, label: string): Html {
  const code = qrcode(0, 'M');
  code.addData(text, 'Byte');
  code.make();
  const count = code.getModuleCount();
  let path = '';
  for (let row = 0; row < count; row++) {
    for (let column = 0; column < count; column++) {
      if (code.isDark(row, column)) path += `M${column + QUIET_ZONE} ${row + QUIET_ZONE}h1v1h-1z`;
    }
  }
  const size = count + 2 * QUIET_ZONE;
  return trustedMarkup(
    `<svg class="qr-code" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${size * 5}" height="${size * 5}" role="img" aria-label="${escapeHtml(label)}" shape-rendering="crispEdges">` +
      `<rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`,
  );
}
