#!/usr/bin/env bash
# Install the pinned Claude Code (npm: @anthropic-ai/claude-code@VERSION, its native binary inside) into
# .claude-code/ of this checkout when it is missing. Never fails: where npm or the package cannot be had it
# says so in one line, and `make conformance` checks dreamloop's side alone against the recorded expectations.
set -u
version="$1"
prefix=".claude-code"
claude="$prefix/node_modules/.bin/claude"
if [ -x "$claude" ] && [ "$("$claude" --version 2>/dev/null | cut -d' ' -f1)" = "$version" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "conformance: npm is not installed, so Claude Code $version cannot be; checking dreamloop's side alone"
  exit 0
fi
echo "conformance: installing @anthropic-ai/claude-code@$version with npm into $prefix/ (ignored by git)."
echo "conformance: Claude Code is Anthropic's software; its licence and Anthropic's terms apply to it (see its README)."
if ! npm install --silent --no-audit --no-fund --prefix "$prefix" "@anthropic-ai/claude-code@$version" >"$prefix.log" 2>&1 \
   || ! "$claude" --version >/dev/null 2>&1; then
  echo "conformance: Claude Code $version could not be installed (npm said: $(tail -n 1 "$prefix.log" 2>/dev/null)); checking dreamloop's side alone"
  rm -rf "$prefix"
  exit 0
fi
rm -f "$prefix.log"
echo "conformance: installed Claude Code $("$claude" --version 2>/dev/null), $(du -sh "$prefix" | cut -f1) on disk."
