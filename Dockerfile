# Image for the api and worker services of docker-compose.yml.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json worker.ts ./
COPY src ./src
ENV NODE_ENV=production
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/api/server.ts"]
