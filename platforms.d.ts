/** The platform ids of package.json's `napi.targets` (`linux-x64-gnu`, `darwin-arm64`, ...). */
export declare const SUPPORTED_PLATFORMS: readonly string[];
/** napi-rs's platform id of a Rust target triple (`aarch64-unknown-linux-musl` -> `linux-arm64-musl`). */
export declare function platformOfTriple(triple: string): string;
/** A process's platform id as the npm packages name it (by default this process's). */
export declare function platformId(platform?: NodeJS.Platform, arch?: string, glibc?: boolean): string;
/** True when this Linux process runs on glibc. */
export declare function isGlibc(): boolean;
