"""Chat: the slash command job (room holds, freezes, subscriptions), notifications, holds from the dashboard."""
