// Test images drawn by Python inside a sandbox, with nothing but the standard library.

/** Python (no imaging library) writing an RGBA PNG: the left half opaque red, the right half transparent. */
export const PNG_WRITER = `
import os, struct, zlib
def png(path, width, height, row, idat=None):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    body = idat if idat is not None else zlib.compress((b"\\x00" + row) * height)
    open(path, "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b""))
def half_red(path, width, height):
    png(path, width, height, b"\\xff\\x00\\x00\\xff" * (width // 2) + b"\\x00\\x00\\x00\\x00" * (width - width // 2))
def interlaced(path, width, height, cut=0):
    # Adam7: seven passes of opaque blue pixels, each row a filter byte and its samples; \`cut\` bytes fewer.
    raw = b""
    for x, y, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
        columns, rows = -(-(width - x) // dx), -(-(height - y) // dy)
        if columns > 0 and rows > 0:
            raw += (b"\\x00" + b"\\x00\\x00\\xff\\xff" * columns) * rows
    raw = raw[: len(raw) - cut]
    chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 1)
    open(path, "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
`;
