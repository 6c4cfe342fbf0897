// Several relay nodes serve one fabric (`--relay ws://a/socket,ws://b/socket`): a client takes the
// list and moves to the next node when its own is gone.
export const relayUrls = (url: string): string[] => {
  const list = url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  return list.length > 0 ? list : [url];
};
