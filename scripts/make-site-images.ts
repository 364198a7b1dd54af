/**
 * Regenerates every image of the bundled sites (tasks/sites/<site>/img/) from SVG
 * drawn here, so the suite carries no third-party artwork and can be rebuilt at will.
 *
 *   npx tsx scripts/make-site-images.ts            # write all images
 *   npx tsx scripts/make-site-images.ts --check    # fail if any committed image differs
 *
 * Photos (products, dishes) are JPEG, flat artwork (logos, icons, tiles) is PNG.
 * Output is deterministic for a given sharp/libvips version.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseScriptArgs } from "./cli-args.ts";

const { values } = parseScriptArgs({
  name: "make-site-images",
  command: "npx tsx scripts/make-site-images.ts",
  summary: "Regenerates every image of the bundled sites (tasks/sites/<site>/img/) from SVG drawn in this script: JPEG for photos, PNG for flat artwork.",
  options: {
    check: { type: "boolean", description: "write nothing; exit 1 if any committed image differs from what this script draws" },
  },
});

// Loaded once the arguments are good: --help and a usage error need no image library.
const { default: sharp } = await import("sharp");

interface SiteImage {
  site: string;
  file: string;
  svg: string;
}

const SITES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "tasks", "sites");

function svg(width: number, height: number, body: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${body}</svg>`;
}

function gradient(id: string, from: string, to: string, vertical = true): string {
  const end = vertical ? 'x2="0" y2="1"' : 'x2="1" y2="0"';
  return (
    `<defs><linearGradient id="${id}" x1="0" y1="0" ${end}>` +
    `<stop offset="0" stop-color="${from}"/><stop offset="1" stop-color="${to}"/></linearGradient></defs>`
  );
}

function logoWidth(name: string): number {
  return 60 + name.length * 15;
}

/** A word mark: a coloured glyph in a rounded square, then the name. */
function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Width grows with the name (about 15 px a character at 24 px bold). */
function logo(name: string, glyph: string, color: string): string {
  return svg(
    logoWidth(name),
    48,
    `<rect x="2" y="4" width="40" height="40" rx="10" fill="${color}"/>` +
      `<text x="22" y="32" font-family="sans-serif" font-size="24" font-weight="700" fill="#fff" text-anchor="middle">${glyph}</text>` +
      `<text x="52" y="33" font-family="sans-serif" font-size="24" font-weight="700" fill="#1f2933">${escapeXml(name)}</text>`,
  );
}

/** A round avatar: a head and shoulders on a coloured disc. */
function avatar(background: string, skin: string, hair: string): string {
  return svg(
    96,
    96,
    `<clipPath id="c"><circle cx="48" cy="48" r="48"/></clipPath><g clip-path="url(#c)">` +
      `<rect width="96" height="96" fill="${background}"/>` +
      `<ellipse cx="48" cy="96" rx="36" ry="26" fill="#ffffff" opacity="0.85"/>` +
      `<circle cx="48" cy="42" r="20" fill="${skin}"/>` +
      `<path d="M28 40 Q30 18 48 18 Q66 18 68 40 Q60 28 48 29 Q36 28 28 40Z" fill="${hair}"/></g>`,
  );
}

function icon(color: string, shape: string): string {
  return svg(
    64,
    64,
    `<rect width="64" height="64" rx="16" fill="${color}" opacity="0.15"/>` +
      `<g fill="none" stroke="${color}" stroke-width="4" stroke-linecap="round" stroke-linejoin="round">${shape}</g>`,
  );
}

/** A dish seen from above on a table: plate, food blobs, garnish. */
function dish(table: string, food: string[], garnish: string): string {
  const blobs = food
    .map((color, i) => {
      const angle = (i / food.length) * Math.PI * 2;
      const x = 160 + Math.cos(angle) * 34;
      const y = 110 + Math.sin(angle) * 26;
      return `<ellipse cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" rx="34" ry="26" fill="${color}"/>`;
    })
    .join("");
  return svg(
    320,
    220,
    gradient("t", table, "#00000033") +
      `<rect width="320" height="220" fill="${table}"/><rect width="320" height="220" fill="url(#t)"/>` +
      `<ellipse cx="160" cy="116" rx="112" ry="86" fill="#00000022"/>` +
      `<ellipse cx="160" cy="110" rx="110" ry="84" fill="#fbfaf7"/><ellipse cx="160" cy="110" rx="84" ry="62" fill="#efece4"/>` +
      blobs +
      `<circle cx="150" cy="100" r="6" fill="${garnish}"/><circle cx="172" cy="116" r="5" fill="${garnish}"/>` +
      `<circle cx="160" cy="92" r="4" fill="${garnish}"/>` +
      `<rect x="268" y="30" width="10" height="160" rx="5" fill="#c9c4b8"/>`,
  );
}

/** A product on a soft studio background with a floor shadow. */
function product(background: string, body: string): string {
  return svg(
    320,
    240,
    gradient("b", "#ffffff", background) +
      `<rect width="320" height="240" fill="url(#b)"/><ellipse cx="160" cy="206" rx="110" ry="14" fill="#00000022"/>` +
      body,
  );
}

function memoryTile(background: string, body: string): string {
  return svg(120, 120, `<rect width="120" height="120" rx="14" fill="${background}"/>${body}`);
}

function airline(color: string, accent: string, letter: string): string {
  return svg(
    64,
    64,
    `<circle cx="32" cy="32" r="30" fill="${color}"/><path d="M14 38 L50 22 L46 30 L54 34 L40 36 L30 48 L30 38Z" fill="${accent}"/>` +
      `<text x="32" y="24" font-family="sans-serif" font-size="12" font-weight="700" fill="#fff" text-anchor="middle">${letter}</text>`,
  );
}

const images: SiteImage[] = [
  // landing: a note-taking app's marketing page
  { site: "landing", file: "logo.png", svg: logo("Tidepool", "T", "#0f766e") },
  {
    site: "landing",
    file: "hero.png",
    svg: svg(
      560,
      360,
      gradient("h", "#ccfbf1", "#99f6e4") +
        `<rect width="560" height="360" rx="18" fill="url(#h)"/><rect x="40" y="40" width="480" height="280" rx="12" fill="#fff"/>` +
        `<rect x="40" y="40" width="130" height="280" rx="12" fill="#f0fdfa"/>` +
        [70, 100, 130, 160].map((y) => `<rect x="60" y="${y}" width="90" height="12" rx="6" fill="#5eead4"/>`).join("") +
        `<rect x="196" y="70" width="220" height="20" rx="6" fill="#134e4a"/>` +
        [110, 132, 154, 176, 198].map((y, i) => `<rect x="196" y="${y}" width="${300 - i * 30}" height="10" rx="5" fill="#cbd5e1"/>`).join("") +
        `<rect x="196" y="230" width="140" height="60" rx="8" fill="#fde68a"/><rect x="350" y="230" width="140" height="60" rx="8" fill="#bfdbfe"/>`,
    ),
  },
  {
    site: "landing",
    file: "icon-sync.png",
    svg: icon("#0f766e", `<path d="M16 28 A16 16 0 0 1 46 22"/><path d="M46 12 V22 H36"/><path d="M48 36 A16 16 0 0 1 18 42"/><path d="M18 52 V42 H28"/>`),
  },
  { site: "landing", file: "icon-search.png", svg: icon("#7c3aed", `<circle cx="28" cy="28" r="12"/><path d="M37 37 L50 50"/>`) },
  {
    site: "landing",
    file: "icon-lock.png",
    svg: icon("#ea580c", `<rect x="18" y="30" width="28" height="20" rx="4"/><path d="M24 30 V24 A8 8 0 0 1 40 24 V30"/>`),
  },
  { site: "landing", file: "avatar-mira.png", svg: avatar("#99f6e4", "#e0ac69", "#3b2a1a") },

  // blog: a travel essay
  { site: "blog", file: "avatar-author.png", svg: avatar("#fde68a", "#f1c27d", "#6b4423") },

  // faq: a public library's help centre
  { site: "faq", file: "logo.png", svg: logo("Northgate Library", "N", "#1d4ed8") },

  // recipes: nine dishes in three tabs
  { site: "recipes", file: "logo.png", svg: logo("Saltbox Kitchen", "S", "#b45309") },
  ...(
    [
      ["oat-bowl", "#d6c7a1", ["#e9d8a6", "#7b2cbf", "#e63946"], "#2a9d8f"],
      ["shakshuka", "#8d6e63", ["#d62828", "#f77f00", "#fcbf49"], "#2b9348"],
      ["pancakes", "#a1887f", ["#e9c46a", "#f4a261", "#e9c46a"], "#9d0208"],
      ["grain-salad", "#90a4ae", ["#80b918", "#f4a261", "#ffe8d6", "#2a9d8f"], "#d00000"],
      ["lentil-soup", "#795548", ["#ee9b00", "#ca6702", "#ee9b00"], "#55a630"],
      ["flatbread", "#b0bec5", ["#f2cc8f", "#e07a5f", "#81b29a"], "#3d405b"],
      ["risotto", "#6d4c41", ["#f1e3c6", "#e9dcc0", "#f1e3c6"], "#386641"],
      ["roast-squash", "#546e7a", ["#f4a261", "#e76f51", "#f4a261", "#264653"], "#6a994e"],
      ["noodles", "#4e342e", ["#ffd166", "#ef476f", "#06d6a0"], "#073b4c"],
    ] as const
  ).map(([name, table, food, garnish]) => ({ site: "recipes", file: `${name}.jpg`, svg: dish(table, [...food], garnish) })),

  // dashboard: a personal finance overview
  { site: "dashboard", file: "logo.png", svg: logo("Ledgerly", "L", "#4338ca") },
  { site: "dashboard", file: "avatar-jo.png", svg: avatar("#c7d2fe", "#8d5524", "#1b1b1b") },
  {
    site: "dashboard",
    file: "icon-wallet.png",
    svg: icon("#4338ca", `<rect x="12" y="20" width="40" height="28" rx="5"/><path d="M40 34 H52"/><path d="M16 20 L42 12 L44 20"/>`),
  },
  { site: "dashboard", file: "icon-trend.png", svg: icon("#059669", `<path d="M12 44 L26 30 L34 38 L52 20"/><path d="M42 20 H52 V30"/>`) },
  {
    site: "dashboard",
    file: "icon-card.png",
    svg: icon("#dc2626", `<rect x="10" y="18" width="44" height="30" rx="5"/><path d="M10 27 H54"/><path d="M18 40 H30"/>`),
  },

  // signup: an evening school's enrolment form
  { site: "signup", file: "logo.png", svg: logo("Brightwater Evening School", "B", "#9333ea") },

  // shop: outdoor gear
  { site: "shop", file: "logo.png", svg: logo("Pebble & Pine", "P", "#166534") },
  {
    site: "shop",
    file: "sneakers.jpg",
    svg: product(
      "#fecaca",
      `<path d="M60 170 Q70 120 110 118 L150 110 Q170 140 220 146 Q262 150 262 178 L60 182Z" fill="#dc2626"/>` +
        `<rect x="56" y="176" width="210" height="16" rx="8" fill="#f8fafc"/>` +
        `<path d="M120 122 L140 150 M132 118 L152 146 M144 114 L164 142" stroke="#fff" stroke-width="5"/>`,
    ),
  },
  {
    site: "shop",
    file: "daypack.jpg",
    svg: product(
      "#bbf7d0",
      `<rect x="100" y="50" width="120" height="150" rx="30" fill="#15803d"/><rect x="118" y="120" width="84" height="60" rx="12" fill="#166534"/>` +
        `<path d="M130 50 Q160 20 190 50" stroke="#14532d" stroke-width="8" fill="none"/><rect x="150" y="130" width="20" height="6" rx="3" fill="#facc15"/>`,
    ),
  },
  {
    site: "shop",
    file: "bottle.jpg",
    svg: product(
      "#bfdbfe",
      `<rect x="132" y="70" width="56" height="130" rx="20" fill="#2563eb"/><rect x="140" y="42" width="40" height="32" rx="8" fill="#1e3a8a"/>` +
        `<rect x="132" y="110" width="56" height="30" fill="#93c5fd"/>`,
    ),
  },
  {
    site: "shop",
    file: "lantern.jpg",
    svg: product(
      "#fde68a",
      `<rect x="122" y="70" width="76" height="120" rx="10" fill="#92400e"/><rect x="132" y="84" width="56" height="92" rx="6" fill="#fef3c7"/>` +
        `<circle cx="160" cy="130" r="18" fill="#f59e0b"/><path d="M136 70 Q160 36 184 70" stroke="#78350f" stroke-width="6" fill="none"/>`,
    ),
  },
  {
    site: "shop",
    file: "beanie.jpg",
    svg: product(
      "#e9d5ff",
      `<path d="M90 170 Q90 70 160 70 Q230 70 230 170Z" fill="#7e22ce"/><rect x="84" y="160" width="152" height="30" rx="10" fill="#581c87"/>` +
        `<circle cx="160" cy="62" r="18" fill="#f5f3ff"/>`,
    ),
  },
  {
    site: "shop",
    file: "tent.jpg",
    svg: product(
      "#fed7aa",
      `<path d="M50 196 L160 60 L270 196Z" fill="#ea580c"/><path d="M160 60 L200 196 L120 196Z" fill="#9a3412"/>` +
        `<path d="M160 60 L160 196" stroke="#fff7ed" stroke-width="3"/>`,
    ),
  },

  // flights: four made-up airlines
  { site: "flights", file: "logo.png", svg: logo("Wayfare", "W", "#0369a1") },
  { site: "flights", file: "airline-skylark.png", svg: airline("#0284c7", "#e0f2fe", "SK") },
  { site: "flights", file: "airline-northwind.png", svg: airline("#b91c1c", "#fee2e2", "NW") },
  { site: "flights", file: "airline-puffin.png", svg: airline("#15803d", "#dcfce7", "PF") },
  { site: "flights", file: "airline-aurora.png", svg: airline("#6d28d9", "#ede9fe", "AU") },

  // tictactoe: the two marks
  {
    site: "tictactoe",
    file: "mark-x.png",
    svg: svg(96, 96, `<path d="M20 20 L76 76 M76 20 L20 76" stroke="#e11d48" stroke-width="14" stroke-linecap="round"/>`),
  },
  { site: "tictactoe", file: "mark-o.png", svg: svg(96, 96, `<circle cx="48" cy="48" r="30" stroke="#2563eb" stroke-width="13" fill="none"/>`) },

  // merge: the game's badge
  {
    site: "merge",
    file: "logo.png",
    svg: svg(
      96,
      96,
      `<rect width="96" height="96" rx="16" fill="#f59e0b"/>` +
        `<text x="48" y="62" font-family="sans-serif" font-size="40" font-weight="800" fill="#fff" text-anchor="middle">2ⁿ</text>`,
    ),
  },

  // memory: eight sea creatures and a card back
  {
    site: "memory",
    file: "back.png",
    svg: memoryTile(
      "#0e7490",
      `<path d="M0 40 Q30 20 60 40 T120 40 M0 70 Q30 50 60 70 T120 70 M0 100 Q30 80 60 100 T120 100" stroke="#67e8f9" stroke-width="4" fill="none"/>`,
    ),
  },
  {
    site: "memory",
    file: "fish.png",
    svg: memoryTile(
      "#fef3c7",
      `<ellipse cx="56" cy="60" rx="32" ry="20" fill="#f97316"/><path d="M86 60 L108 42 L108 78Z" fill="#f97316"/><circle cx="42" cy="56" r="4" fill="#111"/>`,
    ),
  },
  {
    site: "memory",
    file: "shell.png",
    svg: memoryTile(
      "#fce7f3",
      `<path d="M60 96 L24 52 Q60 10 96 52Z" fill="#f472b6"/><path d="M60 96 L44 40 M60 96 L60 30 M60 96 L76 40" stroke="#fff" stroke-width="4"/>`,
    ),
  },
  {
    site: "memory",
    file: "crab.png",
    svg: memoryTile(
      "#fee2e2",
      `<ellipse cx="60" cy="68" rx="30" ry="20" fill="#dc2626"/><circle cx="30" cy="40" r="10" fill="#dc2626"/>` +
        `<circle cx="90" cy="40" r="10" fill="#dc2626"/><path d="M36 84 L24 98 M84 84 L96 98" stroke="#dc2626" stroke-width="5"/>`,
    ),
  },
  {
    site: "memory",
    file: "star.png",
    svg: memoryTile("#ede9fe", `<path d="M60 18 L72 48 L104 50 L80 70 L88 102 L60 84 L32 102 L40 70 L16 50 L48 48Z" fill="#8b5cf6"/>`),
  },
  {
    site: "memory",
    file: "whale.png",
    svg: memoryTile(
      "#dbeafe",
      `<path d="M18 64 Q20 36 60 36 Q96 36 96 64 L108 50 L108 80 L96 70 Q90 90 56 90 Q20 90 18 64Z" fill="#1d4ed8"/>` +
        `<circle cx="40" cy="58" r="4" fill="#fff"/>`,
    ),
  },
  {
    site: "memory",
    file: "octopus.png",
    svg: memoryTile(
      "#f3e8ff",
      `<circle cx="60" cy="48" r="26" fill="#a21caf"/>` +
        [30, 46, 62, 78, 94].map((x) => `<path d="M60 66 Q${x} 80 ${x} 100" stroke="#a21caf" stroke-width="7" fill="none" stroke-linecap="round"/>`).join(""),
    ),
  },
  {
    site: "memory",
    file: "turtle.png",
    svg: memoryTile(
      "#dcfce7",
      `<ellipse cx="60" cy="62" rx="32" ry="24" fill="#15803d"/><circle cx="98" cy="58" r="10" fill="#4ade80"/>` +
        `<path d="M36 62 H84 M60 40 V84" stroke="#bbf7d0" stroke-width="3"/>`,
    ),
  },
  {
    site: "memory",
    file: "anchor.png",
    svg: memoryTile(
      "#e5e7eb",
      `<circle cx="60" cy="28" r="9" stroke="#374151" stroke-width="6" fill="none"/>` +
        `<path d="M60 37 V98 M40 54 H80 M28 74 Q36 100 60 98 Q84 100 92 74" stroke="#374151" stroke-width="7" fill="none" stroke-linecap="round"/>`,
    ),
  },

  // calculator
  { site: "calculator", file: "logo.png", svg: logo("Abacus Desk", "=", "#334155") },
];

async function render(image: SiteImage): Promise<Buffer> {
  const pipeline = sharp(Buffer.from(image.svg));
  return image.file.endsWith(".jpg")
    ? pipeline.flatten({ background: "#ffffff" }).jpeg({ quality: 78, mozjpeg: true }).toBuffer()
    : pipeline.png({ compressionLevel: 9, palette: true }).toBuffer();
}

function writeAtomically(file: string, data: Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, data);
  fs.renameSync(temporary, file);
}

async function main(): Promise<void> {
  const check = values.check;
  let total = 0;
  const differing: string[] = [];
  for (const image of images) {
    const data = await render(image);
    const target = path.join(SITES_DIR, image.site, "img", image.file);
    total += data.length;
    if (check) {
      if (!fs.existsSync(target) || !fs.readFileSync(target).equals(data)) differing.push(path.relative(process.cwd(), target));
    } else {
      writeAtomically(target, data);
    }
  }
  if (differing.length > 0) {
    console.error(`${differing.length} image(s) differ from what this script draws:\n  ${differing.join("\n  ")}`);
    process.exitCode = 1;
    return;
  }
  console.log(`${check ? "checked" : "wrote"} ${images.length} images, ${(total / 1024).toFixed(1)} KiB in total`);
}

await main();
